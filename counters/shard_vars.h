/* Registration of the counter shards' performance variables (see shard_vars.c). */
#ifndef IBMSG_COUNTERS_SHARD_VARS_H
#define IBMSG_COUNTERS_SHARD_VARS_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Register the categories and pvars of counters/counter_table.h. Called once, by the registry's
 * built-in registration, with the registry lock held.
 */
void cnt_shard_vars_register_locked(void);

#ifdef __cplusplus
}
#endif

#endif
