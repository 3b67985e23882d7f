/*
 * Every software counter of ibmsg, declared once. The slot ids of counters/shards/shard.h, the
 * pvars of counters/shards/shard_vars.c and their categories are all generated from these two
 * tables, so adding a counter is one line here and one cnt_inc() where the event happens.
 *
 * CNT_COUNTER_TABLE(X): X(id, name, kind, owner, verbosity, category, description)
 *   id        CNT_<id> is the slot id passed to cnt_inc() and friends
 *   name      the pvar name (lower_snake, subsystem prefix)
 *   kind      COUNTER   only increments (pvar class COUNTER, unsigned long long)
 *             LEVEL     goes up and down, summed over shards (class LEVEL, long long)
 *             LEVEL_WM  a LEVEL that also keeps high and low watermarks (classes
 *                       HIGHWATERMARK / LOWWATERMARK, see counters/shards/shard.h for their
 * meaning) TIMER     accumulated time, read in nanoseconds (class TIMER, unsigned long long) owner
 * which shards are written: THREAD (each thread's own shard) or the block of an object (ENDPOINT,
 * CONTEXT): the pvars bind to NO_OBJECT (the sum over every shard) and to that owner
 * (IBMSG_T_BIND_<owner>); ENDPOINT counters also bind to CONTEXT (an endpoint's block is a child of
 * its context's, see cnt_block_create_child()) verbosity IBMSG_T_VERBOSITY_<verbosity> category the
 * category (of CNT_CATEGORY_TABLE) the pvars join
 */
#ifndef IBMSG_COUNTERS_COUNTER_TABLE_H
#define IBMSG_COUNTERS_COUNTER_TABLE_H

/* CNT_CATEGORY_TABLE(X): X(name, parent, description); parents come before their children. */
#define CNT_CATEGORY_TABLE(X)                                                                    \
    X("ibmsg", NULL, "Everything ibmsg exports")                                                 \
    X("core", "ibmsg", "The messaging core: protocols, matching, progress")                      \
    X("eager", "core", "The eager protocol: messages copied through bounce buffers or inline")   \
    X("matching", "core", "Tag matching: posted receives and unexpected messages")               \
    X("verbs", "ibmsg", "The verbs layer: completion queues, work requests, registered buffers") \
    X("tool", "ibmsg", "The tool information interface itself: sessions and handles")            \
    X("rendezvous", "core", "The rendezvous protocol: large messages pulled with RDMA READ")     \
    X("reg_cache", "verbs", "The registration cache of user buffers")                            \
    X("rma", "core", "One-sided operations: put, get, flush, mapped memory and remote keys")     \
    X("srq", "core", "The shared receive queue of eager buffers and the send window over it")

/* clang-format off */
#define CNT_COUNTER_TABLE(X)                                                                       \
    /* core: eager protocol (per endpoint; also per context, its endpoints summed) */             \
    X(CORE_EAGER_MSGS_SENT, "core_eager_msgs_sent", COUNTER, ENDPOINT, USER_BASIC, "eager",        \
      "Tagged messages sent with the eager protocol (inline sends included)")                      \
    X(CORE_COMPACT_MSGS_SENT, "core_compact_msgs_sent", COUNTER, ENDPOINT, TUNER_BASIC, "eager",   \
      "Eager messages whose header travelled in the immediate data (the payload alone on the wire)")\
    X(CORE_HEADER_MSGS_SENT, "core_header_msgs_sent", COUNTER, ENDPOINT, TUNER_BASIC, "eager",     \
      "Eager messages sent with their header on the wire (not compact: an empty payload or a tag " \
      "above the immediate's range)")                                                              \
    X(CORE_INLINE_MSGS_SENT, "core_inline_msgs_sent", COUNTER, ENDPOINT, TUNER_BASIC, "eager",     \
      "Eager messages whose payload was sent inline in the work request")                          \
    X(CORE_EAGER_BYTES_SENT, "core_eager_bytes_sent", COUNTER, ENDPOINT, USER_BASIC, "eager",      \
      "Payload bytes of tagged messages sent with the eager protocol")                             \
    X(CORE_EAGER_MSGS_RECVD, "core_eager_msgs_recvd", COUNTER, ENDPOINT, USER_BASIC, "eager",      \
      "Eager tagged messages received (matched or unexpected)")                                    \
    X(CORE_EAGER_BYTES_RECVD, "core_eager_bytes_recvd", COUNTER, ENDPOINT, USER_BASIC, "eager",    \
      "Payload bytes of eager tagged messages received")                                           \
    X(CORE_TRUNCATED_MSGS, "core_truncated_msgs", COUNTER, ENDPOINT, USER_BASIC, "eager",          \
      "Messages longer than the receive buffer they matched (completed with a truncation error)")  \
    X(CORE_CREDIT_STALLS, "core_credit_stalls", COUNTER, ENDPOINT, TUNER_BASIC, "eager",           \
      "Sends that waited because their send window (the peer's credits) was used up")              \
    X(CORE_CREDIT_MSGS_SENT, "core_credit_msgs_sent", COUNTER, ENDPOINT, TUNER_DETAIL, "eager",    \
      "Explicit credit returns sent (credits not piggy-backed on a message)")                      \
    X(CORE_CREDIT_MSGS_RECVD, "core_credit_msgs_recvd", COUNTER, ENDPOINT, TUNER_DETAIL, "eager",  \
      "Explicit credit returns received")                                                          \
    X(CORE_WIRE_REJECTED, "core_wire_rejected", COUNTER, ENDPOINT, USER_BASIC, "eager",            \
      "Headers from the wire rejected as malformed (length, tag, sequence or credits)")            \
    /* core: tag matching (per context: receives may match any endpoint) */                        \
    X(CORE_POSTED_RECVQ, "core_posted_recvq_length", LEVEL_WM, CONTEXT, TUNER_BASIC, "matching",   \
      "Receives posted and not yet matched")                                                       \
    X(CORE_UNEXPECTED_RECVQ, "core_unexpected_recvq_length", LEVEL_WM, CONTEXT, TUNER_BASIC,       \
      "matching", "Messages arrived before a matching receive was posted")                         \
    X(CORE_UNEXPECTED_MSGS, "core_unexpected_msgs", COUNTER, CONTEXT, TUNER_BASIC, "matching",     \
      "Messages that arrived before a matching receive was posted")                                \
    X(CORE_MATCH_ATTEMPTS, "core_match_attempts", COUNTER, CONTEXT, TUNER_DETAIL, "matching",      \
      "Queue entries compared while matching (both queues)")                                       \
    X(CORE_PROBES, "core_probes", COUNTER, CONTEXT, USER_BASIC, "matching",                      \
      "Calls of ibmsg_tag_probe (each makes progress once and looks at the unexpected queue)")    \
    X(CORE_PROBES_FOUND, "core_probes_found", COUNTER, CONTEXT, USER_BASIC, "matching",          \
      "Calls of ibmsg_tag_probe that found a matching message (it stays to be received)")         \
    X(CORE_MPROBES, "core_mprobes", COUNTER, CONTEXT, USER_BASIC, "matching",                    \
      "Calls of ibmsg_tag_mprobe (matched probes)")                                               \
    X(CORE_MPROBES_MATCHED, "core_mprobes_matched", COUNTER, CONTEXT, USER_BASIC, "matching",    \
      "Messages ibmsg_tag_mprobe took out of matching (each received by ibmsg_tag_imrecv)")       \
    X(CORE_MPROBED_MSGS, "core_mprobed_msgs", LEVEL_WM, CONTEXT, TUNER_BASIC, "matching",         \
      "Messages taken by ibmsg_tag_mprobe and not yet given to ibmsg_tag_imrecv")               \
    X(CORE_IOV_OPS, "core_iov_ops", COUNTER, CONTEXT, USER_BASIC, "core",                        \
      "Vector operations issued: ibmsg_tag_isendv / _irecvv (and the blocking forms), "          \
      "ibmsg_putv, ibmsg_getv")                                                                   \
    X(CORE_IOV_ENTRIES, "core_iov_entries", COUNTER, CONTEXT, USER_BASIC, "core",                \
      "Entries of the vector operations issued (empty entries included)")                         \
    X(CORE_PROGRESS_TIME, "core_progress_time", TIMER, CONTEXT, TUNER_DETAIL, "core",              \
      "Time spent in the progress engine, in nanoseconds (counted while a handle runs)")           \
    /* verbs (per context, except what belongs to one queue pair) */                               \
    X(VERBS_CQ_POLLS, "verbs_cq_polls", COUNTER, CONTEXT, TUNER_DETAIL, "verbs",                   \
      "Completion queue polls")                                                                    \
    X(VERBS_CQ_POLLS_EMPTY, "verbs_cq_polls_empty", COUNTER, CONTEXT, TUNER_DETAIL, "verbs",       \
      "Completion queue polls that found no completion")                                           \
    X(VERBS_COMPLETIONS, "verbs_completions", COUNTER, CONTEXT, TUNER_BASIC, "verbs",              \
      "Work completions reaped from completion queues")                                            \
    X(VERBS_SEND_WRS_POSTED, "verbs_send_wrs_posted", COUNTER, ENDPOINT, TUNER_DETAIL, "verbs",    \
      "Send work requests posted (all but markers: keepalive probes, counted on their own, and the drain marker of ibmsg_ep_destroy)")               \
    X(VERBS_SEND_DOORBELLS, "verbs_send_doorbells", COUNTER, ENDPOINT, TUNER_DETAIL, "verbs",      \
      "Send posts (ibv_post_send calls, probes aside); held messages go in one (core_send_batch)") \
    X(VERBS_RECV_WRS_POSTED, "verbs_recv_wrs_posted", COUNTER, ENDPOINT, TUNER_DETAIL, "verbs",    \
      "Receive work requests posted")                                                              \
    X(VERBS_WC_ERRORS, "verbs_wc_errors", COUNTER, ENDPOINT, USER_BASIC, "verbs",                  \
      "Work completions with an error status (flushes, the echo of an error, not counted)")        \
    X(VERBS_RNR_EVENTS, "verbs_rnr_events", COUNTER, ENDPOINT, TUNER_BASIC, "verbs",               \
      "Receiver-not-ready events: sends the peer refused for lack of a posted receive")            \
    X(VERBS_BUF_POOL_IN_USE, "verbs_buf_pool_in_use", LEVEL_WM, CONTEXT, TUNER_BASIC, "verbs",     \
      "Registered bounce buffers taken from the pools (send and receive)")                         \
    /* the tool interface itself (per thread) */                                                   \
    X(TOOL_HANDLE_ALLOCS, "tool_handle_allocs", COUNTER, THREAD, TUNER_DETAIL, "tool",             \
      "Performance variable handles allocated")                                                    \
    X(TOOL_HANDLES_ALIVE, "tool_handles_alive", LEVEL_WM, THREAD, TUNER_DETAIL, "tool",            \
      "Performance variable handles that exist now")                                               \
    X(TOOL_SESSIONS_ALIVE, "tool_sessions_alive", LEVEL_WM, THREAD, TUNER_DETAIL, "tool",          \
      "Performance variable sessions that exist now")                                              \
    X(TOOL_PVAR_READ_TIME, "tool_pvar_read_time", TIMER, THREAD, TUNER_DETAIL, "tool",             \
      "Time spent in ibmsg_t_pvar_read, in nanoseconds (counted while a handle runs)")             \
    /* core: rendezvous protocol (per endpoint) */                                                 \
    X(CORE_RNDV_MSGS_SENT, "core_rndv_msgs_sent", COUNTER, ENDPOINT, USER_BASIC, "rendezvous",     \
      "Tagged messages sent with the rendezvous protocol (request-to-send posted)")               \
    X(CORE_RNDV_BYTES_SENT, "core_rndv_bytes_sent", COUNTER, ENDPOINT, USER_BASIC, "rendezvous",   \
      "Payload bytes of tagged messages sent with the rendezvous protocol")                        \
    X(CORE_RNDV_MSGS_RECVD, "core_rndv_msgs_recvd", COUNTER, ENDPOINT, USER_BASIC, "rendezvous",   \
      "Requests-to-send received (matched or unexpected)")                                         \
    X(CORE_RNDV_BYTES_RECVD, "core_rndv_bytes_recvd", COUNTER, ENDPOINT, USER_BASIC, "rendezvous", \
      "Payload bytes pulled into receive buffers with RDMA READ (truncated messages: what fit)")   \
    X(CORE_RNDV_READS_POSTED, "core_rndv_reads_posted", COUNTER, ENDPOINT, TUNER_DETAIL,           \
      "rendezvous", "RDMA READ work requests posted (a message is split by the port's limits)")    \
    X(CORE_RNDV_REJECTED, "core_rndv_rejected", COUNTER, ENDPOINT, USER_BASIC, "rendezvous",       \
      "Requests-to-send and FINs rejected: id, address, length or key of no outstanding transfer") \
    X(CORE_RNDV_WINDOWS_BOUND, "core_rndv_windows_bound", COUNTER, ENDPOINT, TUNER_DETAIL,         \
      "rendezvous", "Memory windows bound over exactly a rendezvous message (its key, one use)")   \
    X(CORE_RNDV_LOCAL_INVALIDATIONS, "core_rndv_local_invalidations", COUNTER, ENDPOINT,           \
      TUNER_DETAIL, "rendezvous",                                                                  \
      "Windows invalidated here after the FIN, as the FIN did not invalidate them (SEND_WITH_INV)") \
    X(CORE_RNDV_REMOTE_INVALIDATIONS, "core_rndv_remote_invalidations", COUNTER, ENDPOINT,         \
      TUNER_DETAIL, "rendezvous",                                                                  \
      "Windows the receiver's FIN invalidated (sent with invalidate, flagged): none invalidated here") \
    X(CORE_RNDV_REGISTERED_SENDS, "core_rndv_registered_sends", COUNTER, ENDPOINT, TUNER_BASIC,    \
      "rendezvous", "Rendezvous sends whose key was a registration of exactly the message, not a " \
      "window: no usable windows (device, core_rndv_windows) or none could be had for it")       \
    /* verbs: registration cache of user buffers (per context) */                                  \
    X(VERBS_REG_CACHE_HITS, "verbs_reg_cache_hits", COUNTER, CONTEXT, TUNER_BASIC, "reg_cache",    \
      "Registrations found in the cache and still mapping the same pages")                        \
    X(VERBS_REG_CACHE_MISSES, "verbs_reg_cache_misses", COUNTER, CONTEXT, TUNER_BASIC,             \
      "reg_cache", "Memory registrations made (every one when the cache is disabled)")             \
    X(VERBS_REG_CACHE_EVICTIONS, "verbs_reg_cache_evictions", COUNTER, CONTEXT, TUNER_BASIC,       \
      "reg_cache", "Unused cached registrations released to stay within the size limits")          \
    X(VERBS_REG_CACHE_INVALIDATIONS, "verbs_reg_cache_invalidations", COUNTER, CONTEXT,            \
      TUNER_BASIC, "reg_cache",                                                                    \
      "Cached registrations dropped because their addresses map other pages now (freed memory)")  \
    X(VERBS_REG_RELEASES, "verbs_reg_releases", COUNTER, CONTEXT, TUNER_BASIC, "reg_cache",        \
      "Memory registrations released (evicted, invalidated, one transfer's, at destroy): those "   \
      "made (verbs_reg_cache_misses) minus these are live")                                       \
    X(VERBS_REG_BYTES, "verbs_reg_bytes", LEVEL_WM, CONTEXT, TUNER_BASIC, "reg_cache",             \
      "Bytes of user memory registered now (cached or in use by a transfer)")                      \
    X(CORE_RNDV_READS_OUTSTANDING, "core_rndv_reads_outstanding", LEVEL_WM, CONTEXT, TUNER_DETAIL, \
      "rendezvous", "RDMA READs posted and not complete (per endpoint at most its max_rd_atomic)")  \
    /* core: one-sided operations (per endpoint; mapped memory per context) */                    \
    X(CORE_RMA_PUT_OPS, "core_rma_put_ops", COUNTER, ENDPOINT, USER_BASIC, "rma",                  \
      "Puts (RDMA WRITE operations) issued, of any size")                                         \
    X(CORE_RMA_PUT_BYTES, "core_rma_put_bytes", COUNTER, ENDPOINT, USER_BASIC, "rma",              \
      "Bytes of the puts issued")                                                                 \
    X(CORE_RMA_GET_OPS, "core_rma_get_ops", COUNTER, ENDPOINT, USER_BASIC, "rma",                  \
      "Gets (RDMA READ operations) issued, of any size")                                          \
    X(CORE_RMA_GET_BYTES, "core_rma_get_bytes", COUNTER, ENDPOINT, USER_BASIC, "rma",              \
      "Bytes of the gets issued")                                                                 \
    X(CORE_RMA_INLINE_PUTS, "core_rma_inline_puts", COUNTER, ENDPOINT, TUNER_BASIC, "rma",         \
      "Puts whose data went inline in the work request")                                          \
    X(CORE_RMA_FETCH_ADDS, "core_rma_fetch_adds", COUNTER, ENDPOINT, USER_BASIC, "rma",           \
      "64-bit remote fetch-and-add operations issued (ibmsg_atomic_fetch_add64)")                 \
    X(CORE_RMA_CSWAPS, "core_rma_cswaps", COUNTER, ENDPOINT, USER_BASIC, "rma",                   \
      "64-bit remote compare-and-swap operations issued (ibmsg_atomic_cswap64)")                  \
    X(CORE_RMA_FLUSHES, "core_rma_flushes", COUNTER, ENDPOINT, USER_BASIC, "rma",                  \
      "Endpoint flushes started")                                                                 \
    X(CORE_RMA_REFUSED_OOB, "core_rma_refused_out_of_bounds", COUNTER, ENDPOINT, USER_BASIC,       \
      "rma", "Puts and gets refused locally: outside the range of the remote key")                \
    X(CORE_RMA_RKEYS_REJECTED, "core_rma_rkeys_rejected", COUNTER, ENDPOINT, USER_BASIC, "rma",    \
      "Remote key blobs from peers rejected as malformed")                                        \
    X(CORE_RMA_FENCED_WRS, "core_rma_fenced_wrs", COUNTER, ENDPOINT, TUNER_DETAIL, "rma",          \
      "Puts and messages posted with a fence: the first behind a get's RDMA READs in flight")      \
    X(CORE_RMA_MAPPED_BYTES, "core_rma_mapped_bytes", LEVEL_WM, CONTEXT, USER_BASIC, "rma",        \
      "Bytes of memory mapped for one-sided access now")  \
    /* core: failures (core/failure.c) */                                                          \
    X(CORE_EP_FAILURES, "core_ep_failures", COUNTER, ENDPOINT, USER_BASIC, "core",                 \
      "Endpoints that failed: transport error (peer dead or unreachable) or failed post")          \
    X(CORE_KEEPALIVES_SENT, "core_keepalives_sent", COUNTER, ENDPOINT, TUNER_BASIC, "core",        \
      "Keepalive probes (zero-length RDMA writes) posted to silent endpoints")                     \
    X(CORE_PEER_FAILED_REQS, "core_peer_failed_reqs", COUNTER, ENDPOINT, USER_BASIC, "core",       \
      "Requests completed with IBMSG_ERR_PEER_FAILED when their endpoint failed")                  \
    X(CORE_ENDPOINTS, "core_endpoints", LEVEL_WM, CONTEXT, TUNER_BASIC, "core",                    \
      "Endpoints that exist now (created and not yet destroyed)")                                  \
    /* core: the shared receive queue and the completion queues (core/srq.c, core/cq_budget.c) */  \
    X(CORE_SRQ_ACTIVE, "core_srq_active", LEVEL, CONTEXT, USER_BASIC, "srq",                       \
      "1: eager buffers are in one shared receive queue; 0: per-endpoint receive queues")          \
    X(CORE_SRQ_POSTED, "core_srq_posted", LEVEL_WM, CONTEXT, TUNER_BASIC, "srq",                   \
      "Buffers posted to the shared receive queue now (the low watermark: how close to RNR)")      \
    X(CORE_SRQ_TARGET, "core_srq_target", LEVEL_WM, CONTEXT, TUNER_BASIC, "srq",                   \
      "Buffers refills bring the shared receive queue back to (doubled on limit events)")          \
    X(CORE_SRQ_LIMIT_EVENTS, "core_srq_limit_events", COUNTER, CONTEXT, TUNER_BASIC, "srq",        \
      "Limit events of the shared receive queue: fewer than a quarter of its target posted")       \
    X(CORE_SRQ_REFILLS, "core_srq_refills", COUNTER, CONTEXT, TUNER_DETAIL, "srq",                 \
      "Refills of the shared receive queue (post lists of consumed buffers)")                      \
    X(CORE_SRQ_EMPTY, "core_srq_empty", COUNTER, CONTEXT, TUNER_BASIC, "srq",                      \
      "Times every posted buffer was consumed: senders may meet RNR NAKs until the refill (the "   \
      "core's view of RNR; nic_rcvd_rnr_err is the transport's)")                                  \
    X(CORE_SRQ_CREDITS_WITHHELD, "core_srq_credits_withheld", COUNTER, ENDPOINT, TUNER_BASIC,      \
      "srq", "Credit returns that waited for room in the shared receive queue's budget (one per "  \
      "wait of an endpoint): the senders' windows overcommitted the pool")                         \
    X(CORE_SRQ_CREDITS_FORGIVEN, "core_srq_credits_forgiven", COUNTER, ENDPOINT, TUNER_BASIC,      \
      "srq", "Credits of peers silent through a stall (endpoints waited, nothing arrived) that "   \
      "left the shared receive queue's budget: idle senders held them (RNR if they wake)")         \
    X(CORE_SCQ_STALLS, "core_scq_stalls", COUNTER, CONTEXT, TUNER_BASIC, "srq",                    \
      "Work requests that waited because the send completion queue could grow no further")         \
    X(CORE_CQ_RESIZES, "core_cq_resizes", COUNTER, CONTEXT, TUNER_DETAIL, "srq",                   \
      "Completion queues grown (ibv_resize_cq) for more outstanding work")                         \
    /* core: sleeping on the context's fd, device events (core/wait.c, core/async.c) */            \
    X(CORE_WAIT_SLEEPS, "core_wait_sleeps", COUNTER, CONTEXT, TUNER_BASIC, "core",                 \
      "Sleeps on the context's file descriptor (ibmsg_context_wait, blocking calls not spinning)") \
    X(CORE_WAIT_WAKEUPS, "core_wait_wakeups", COUNTER, CONTEXT, TUNER_BASIC, "core",               \
      "Sleeps that ended because the file descriptor became readable (not by a timeout)")          \
    X(CORE_WAIT_ARM_BUSY, "core_wait_arm_busy", COUNTER, CONTEXT, TUNER_BASIC, "core",             \
      "Arms that found work already there (IBMSG_ERR_BUSY): no sleep")                             \
    X(CORE_ASYNC_EVENTS, "core_async_events", COUNTER, CONTEXT, USER_BASIC, "core",                \
      "Asynchronous events of the device read (port down or up, QP fatal, SRQ limit, ...)")        \
    X(CORE_PORT_DOWN_EVENTS, "core_port_down_events", COUNTER, CONTEXT, USER_BASIC, "core",        \
      "Times the context's port went down (IBV_EVENT_PORT_ERR): endpoints with traffic failed")  \
    X(CORE_ADDRESS_EVENTS, "core_address_events", COUNTER, CONTEXT, USER_BASIC, "core",            \
      "GID table or LID changes of the context's port (IBV_EVENT_GID_CHANGE, _LID_CHANGE): the "  \
      "address of new queue pairs queried again")
/* clang-format on */

/*
 * CNT_SUM_TABLE(X): X(id, part): counter id reads as its own slot plus the slot of counter part
 * (not part's sum: parts are the slots as written). So an event that belongs to two counters,
 * e.g. every eager message is also a send work request, is one add on the hot path, and the
 * sum costs the reader, who merges shards anyway. Each part has id's owner (the same blocks)
 * and both are COUNTERs; the slot of id then holds what no part holds, and the writers say so
 * where they count (core/progress.c, post_msg). An eager message is one add to the slot of its
 * pair of kinds, inline or from a bounce buffer and compact or with its header:
 *   core_eager_msgs_sent's own slot    bounce buffer, header
 *   core_compact_msgs_sent's           bounce buffer, compact
 *   core_header_msgs_sent's            inline, header
 *   core_inline_msgs_sent's            inline, compact
 * (each pair of a kind side by side, so the compact flag indexes it), and each of the four
 * counters reads as the two or four slots of its kind. verbs_send_wrs_posted's own slot: the
 * work requests that are neither an eager message nor a credit return.
 */
#define CNT_SUM_TABLE(X)                             \
    X(CORE_EAGER_MSGS_SENT, CORE_COMPACT_MSGS_SENT)  \
    X(CORE_EAGER_MSGS_SENT, CORE_HEADER_MSGS_SENT)   \
    X(CORE_EAGER_MSGS_SENT, CORE_INLINE_MSGS_SENT)   \
    X(CORE_COMPACT_MSGS_SENT, CORE_INLINE_MSGS_SENT) \
    X(CORE_HEADER_MSGS_SENT, CORE_EAGER_MSGS_SENT)   \
    X(CORE_INLINE_MSGS_SENT, CORE_HEADER_MSGS_SENT)  \
    X(VERBS_SEND_WRS_POSTED, CORE_EAGER_MSGS_SENT)   \
    X(VERBS_SEND_WRS_POSTED, CORE_COMPACT_MSGS_SENT) \
    X(VERBS_SEND_WRS_POSTED, CORE_HEADER_MSGS_SENT)  \
    X(VERBS_SEND_WRS_POSTED, CORE_INLINE_MSGS_SENT)  \
    X(VERBS_SEND_WRS_POSTED, CORE_CREDIT_MSGS_SENT)

#endif
