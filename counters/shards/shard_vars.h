/* Registration of the counter shards' performance variables (see shard_vars.c). */
#ifndef IBMSG_COUNTERS_SHARD_VARS_H
#define IBMSG_COUNTERS_SHARD_VARS_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Register the categories and pvars of counters/shards/counter_table.h through the registry's
 * calls. Called once, by counters/builtin.c, before anything else registers.
 */
void cnt_shard_vars_register(void);

#ifdef __cplusplus
}
#endif

#endif
