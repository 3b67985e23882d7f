/*
 * The one place that wires the built-in counter sources into the registry, which knows none of
 * them: the counter shards (their variables, and the meters that count the registry's sessions,
 * handles and reads), the NIC port counters and PAPI. It implements ibmsg_t_init_thread.
 */
#ifndef IBMSG_COUNTERS_BUILTIN_H
#define IBMSG_COUNTERS_BUILTIN_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Wire the shards in once (pthread_once): the registry's meters, the shards' thread hook (PAPI)
 * and the shard variables, whose categories every later registration may name. Runs at library
 * load; a layer above calls it before it registers, for static links that leave the load-time
 * constructor's object out. Thread safe; later calls return at once.
 */
void cnt_builtin_init(void);

/**
 * The variables of a layer above (the core's settings) that ibmsg_t_init_thread registers too,
 * so that a tool finds them before the layer's first object exists; register runs once per
 * process (it guards itself) and may register through the registry. Set at load, before any
 * thread: the counters call no layer above them but through this pointer.
 */
void cnt_builtin_set_client_register(void (*register_vars)(void));

#ifdef __cplusplus
}
#endif

#endif
