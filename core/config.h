/*
 * The tunables of a context, declared once (X-macro: field, name, default, min, max,
 * description). Each is a control variable (environment IBMSG_<NAME>) whose value is the default
 * of every context created afterwards; info hints of the same name override it for one context.
 */
#ifndef IBMSG_CORE_CONFIG_H
#define IBMSG_CORE_CONFIG_H

#include <stdint.h>

#include <ibmsg/info.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORE_CONFIG_BASE_LIST(X)                                                                 \
    X(port, "port", 0, 0, 255, "RDMA port number (1-based); 0: the first ACTIVE port")           \
    X(gid_index, "gid_index", -1, -1, 255,                                                       \
      "GID table index; -1: the RoCE v2 IPv4-mapped GID on RoCE, none on IB")                    \
    X(eager_limit, "core_eager_limit", 8192, 0, 1048576,                                         \
      "largest eager message in bytes, and the receive buffer size (24 B less above "            \
      "IBMSG_TAG_COMPACT_MAX)")                                                                  \
    X(inline_limit, "core_inline_limit", 200, 0, 1024,                                           \
      "messages of up to this many bytes go inline (capped by the device's max_inline)")         \
    X(credits, "core_credits", 64, 4, 4096,                                                      \
      "per-endpoint send window: messages a sender may have unconsumed at the receiver "         \
      "(without a shared receive queue: receive buffers posted per endpoint)")                   \
    X(srq, "core_srq", 1, 0, 1,                                                                  \
      "1: eager receive buffers in one shared receive queue per context when the device has "    \
      "one; 0: per-endpoint receive queues")                                                     \
    X(srq_depth, "core_srq_depth", 256, 4, 1048576,                                              \
      "receive buffers posted to the shared receive queue at context creation")                  \
    X(srq_max, "core_srq_max", 2048, 4, 1048576,                                                 \
      "receive buffers the shared receive queue grows to at most (on its limit events)")         \
    X(sq_depth, "core_sq_depth", 64, 8, 16384, "send queue entries per endpoint")                \
    X(signal_interval, "core_signal_interval", 16, 1, 1024,                                      \
      "request a send completion every this many sends (at most half the send queue)")           \
    X(send_batch, "core_send_batch", 32, 1, 64,                                                  \
      "messages held to leave in one post (doorbell): they go when this many are held, at the "  \
      "next progress call (test, wait, progress) or before any other work request; 1: at once")  \
    X(poll_batch, "core_poll_batch", 16, 1, 64, "completions taken per CQ poll")                 \
    X(cq_size, "core_cq_size", 1024, 64, 32767,                                                  \
      "initial entries of each completion queue (grown up to the device's maximum)")             \
    X(timeout, "verbs_timeout", 14, 1, 31, "RC local ACK timeout, 4.096 us * 2^value")           \
    X(retry_cnt, "verbs_retry_cnt", -1, -1, 7,                                                   \
      "RC transport retries; -1: 7, or 6 on Soft-RoCE (which takes 7 as forever: a dead peer "   \
      "would go unnoticed)")                                                                     \
    X(rnr_retry, "verbs_rnr_retry", 7, 0, 7,                                                     \
      "RC RNR retries (7: forever, the last resort of a shared receive queue)")                  \
    X(min_rnr_timer, "verbs_min_rnr_timer", 12, 0, 31, "RC minimal RNR NAK timer (IB encoding)") \
    X(sl, "verbs_sl", 0, 0, 15,                                                                  \
      "service level of the connections (IB: the SL to VL map; RoCE: "                           \
      "the priority, as the fabric's QoS policy says)")                                          \
    X(pkey_index, "verbs_pkey_index", 0, 0, 65535,                                               \
      "P_Key table index of the connections (IB partitions; the port's table, as the subnet "    \
      "manager set it)")                                                                         \
    X(traffic_class, "verbs_traffic_class", 0, 0, 255,                                           \
      "traffic class of the GRH (RoCE: DSCP << 2 | ECN bits, as the fabric's QoS policy says)")  \
    X(flow_label, "verbs_flow_label", 0, 0, 1048575,                                             \
      "flow label of the GRH (RoCE v2 may hash it into the UDP source port for ECMP)")           \
    X(hop_limit, "verbs_hop_limit", 64, 1, 255,                                                  \
      "hop limit of the GRH on IB (routed subnets); RoCE takes the IP route's TTL")              \
    X(mtu, "verbs_mtu", 0, 0, 4096,                                                              \
      "largest path MTU in bytes (rounded down to 256, 512, 1024, 2048 or 4096); 0: the "        \
      "active MTU of both ports")                                                                \
    X(relaxed_ordering, "verbs_relaxed_ordering", 1, 0, 1,                                       \
      "1: registrations ask for PCIe relaxed ordering (ignored by devices without it); 0: "      \
      "strict ordering")                                                                         \
    X(share_device, "verbs_share_device", 1, 0, 1,                                               \
      "1: contexts of a process that choose the same device share one device context and "       \
      "protection domain; 0: each context opens its own")                                        \
    X(max_rd_atomic, "verbs_max_rd_atomic", 16, 1, 16,                                           \
      "RDMA READs in flight per queue pair, each direction, at most (the device's limits and "   \
      "the peer's, exchanged at connection, may lower it)")                                      \
    X(reg_cache, "verbs_reg_cache", 1, 0, 1,                                                     \
      "1: keep registrations of user buffers in a cache; 0: register for every transfer")        \
    X(reg_cache_check, "verbs_reg_cache_check", -1, -1, 1,                                       \
      "how the cache learns of freed memory: frames (0: /proc/self/pagemap, needs "              \
      "CAP_SYS_ADMIN), releases (1: userfaultfd events), auto (-1: frames if visible, else "     \
      "releases)")                                                                               \
    X(reg_cache_max_entries, "verbs_reg_cache_max_entries", 1024, 1, 1048576,                    \
      "registrations the cache keeps at most")                                                   \
    X(reg_cache_max_bytes, "verbs_reg_cache_max_bytes", 1073741824, 4096, 1099511627776,         \
      "bytes of user memory the cache keeps registered at most")                                 \
    X(rndv_chunk, "core_rndv_chunk", 262144, 0, 1073741824,                                      \
      "largest RDMA READ of the rendezvous protocol: a message is pulled in READs of this "      \
      "size, up to verbs_max_rd_atomic in flight; 0: the port's max message size (one READ)")    \
    X(rndv_windows, "core_rndv_windows", 1, 0, 1,                                                \
      "1: rendezvous keys are memory windows over exactly the message (type 2B devices); 0: "    \
      "a registration of exactly the message per transfer")                                      \
    X(rndv_window_max, "core_rndv_window_max", 2147483648, 1, 2147483648,                        \
      "largest rendezvous message whose key is a memory window (one bind: mlx5 takes at most 2 " \
      "GiB); a larger one registers exactly its bytes for the transfer")                         \
    X(iov_sge_max, "core_iov_sge_max", 0, 0, 16,                                                 \
      "scatter/gather elements per work request of a vector operation at most; 0: the "          \
      "device's limits (max_send_sge, max_sge_rd for READs), at most 16")                        \
    X(keepalive_ms, "core_keepalive_ms", 1000, 0, 3600000,                                       \
      "probe an endpoint that received nothing for this long (ms; 0: never; see failure.h)")     \
    X(wait_mode, "core_wait_mode", 0, 0, 2,                                                      \
      "how blocking calls wait: spin (poll until done), sleep (on the context's fd: "            \
      "ibmsg_context_wait), adaptive (spin core_wait_spin_us, then sleep)")                      \
    X(wait_spin_us, "core_wait_spin_us", 50, 0, 10000000,                                        \
      "adaptive waits spin this many microseconds before they sleep")

/* The world's settings (world/world.c, world/wireup.c), a list of their own so the one above keeps
   its lines. */
#define CORE_CONFIG_WORLD_LIST(X)                                                       \
    X(world_wireup, "world_wireup", 1, 0, 1,                                            \
      "world endpoints: 0 eager (all peers at init), 1 on demand (first use, over UD)") \
    X(connect_timeout_ms, "world_connect_timeout_ms", 30000, 100, 3600000,              \
      "on-demand wireup: fail an endpoint whose peer has not answered in this many ms")

#define CORE_CONFIG_INT_LIST(X) CORE_CONFIG_BASE_LIST(X) CORE_CONFIG_WORLD_LIST(X)

#define CORE_CONFIG_DEVICE_MAX 64

/* core_wait_mode's values (an enumeration: IBMSG_CORE_WAIT_MODE=sleep works too). */
enum { CORE_WAIT_SPIN = 0, CORE_WAIT_SLEEP = 1, CORE_WAIT_ADAPTIVE = 2 };

typedef struct core_config {
    char device[CORE_CONFIG_DEVICE_MAX]; /* "device": name, "" = any */
    char netdev[CORE_CONFIG_DEVICE_MAX]; /* "verbs_netdev": RoCE GID's interface, "" = any */
#define CORE_CONFIG_FIELD(field, name, def, min, max, desc) int64_t field;
    CORE_CONFIG_INT_LIST(CORE_CONFIG_FIELD)
#undef CORE_CONFIG_FIELD
} core_config_t;

/** Register the control variables (once: at the first ibmsg_t_init_thread or context). */
void core_config_init(void);

/**
 * Register the category world alone (its settings go there with the others, its pvars and events
 * from world/): described here, once. It registers no setting, so the world may call it at load.
 */
int core_config_world_category(void);

/**
 * The settings for a new context: the control variables' current values, then info's hints
 * (IBMSG_INFO_NULL: none). A hint out of range is IBMSG_ERR_OUT_OF_RANGE, one of the wrong type
 * IBMSG_ERR_WRONG_TYPE (integers may also be given as decimal strings); both are logged. On
 * success a context now exists: control variable writes give SET_NOT_NOW until
 * core_config_release.
 */
int core_config_acquire(ibmsg_info_t info, core_config_t *cfg);

/** A context is gone (pairs with a successful core_config_acquire). */
void core_config_release(void);

/** Whether value is in the range of the integer setting called name (for the cvar writes). */
int core_config_check(const char *name, int64_t value);

#ifdef __cplusplus
}
#endif

#endif
