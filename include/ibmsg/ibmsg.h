/*
 * ibmsg messaging API: tagged messages between endpoints over InfiniBand / RoCE reliable
 * connections.
 *
 * Objects:
 *   context  one per thread is the fast path. It owns the device, protection domain, completion
 *            queues and buffer pools. Nothing in it is locked: every call that takes a context,
 *            an endpoint or a request of that context must come from one thread at a time.
 *            Different contexts are independent and may be used by different threads at once.
 *   endpoint one reliable connection to one peer endpoint, created in a context and connected
 *            by exchanging address blobs over any out-of-band channel (or the TCP helper).
 *   request  one non-blocking send or receive; completed by test / wait.
 *
 * Matching follows MPI: receives are matched in the order they were posted, messages in the
 * order they arrived from each endpoint (non-overtaking); a receive matches a message when
 * (message tag XOR receive tag) AND mask is 0 and its endpoint is the sender's or NULL (any).
 *
 * Protocols: a message up to the eager limit (ibmsg_context_query) is copied through registered
 * bounce buffers, or sent inline when small; a larger one goes by rendezvous (the receiver reads
 * it from the sender's buffer with RDMA READ). Credits make sure a sender never overruns the
 * receiver's posted buffers.
 *
 * All functions return IBMSG_OK (0) or a negative ibmsg_status_t; output arguments are set only
 * on success.
 */
#ifndef IBMSG_IBMSG_H
#define IBMSG_IBMSG_H

#include <stddef.h>
#include <stdint.h>

#include <ibmsg/export.h>
#include <ibmsg/info.h>
#include <ibmsg/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ibmsg_context_s *ibmsg_context_t;
typedef struct ibmsg_ep_s *ibmsg_ep_t;
typedef struct ibmsg_request_s *ibmsg_request_t;
typedef struct ibmsg_message_s *ibmsg_message_t;

#define IBMSG_CONTEXT_NULL ((ibmsg_context_t)0)
#define IBMSG_EP_NULL      ((ibmsg_ep_t)0)
#define IBMSG_REQUEST_NULL ((ibmsg_request_t)0)
#define IBMSG_MESSAGE_NULL ((ibmsg_message_t)0)

/* A mask that matches only the exact tag, and one that matches any tag. */
#define IBMSG_TAG_MASK_EXACT UINT64_MAX
#define IBMSG_TAG_MASK_ANY   ((uint64_t)0)

/* Eager messages with tags up to this travel with their header in the send's 32-bit immediate:
 * the wire holds only their bytes (a message of the path MTU is one packet, not two). Larger
 * tags work the same and add a 24-byte header to each message, which takes its bytes of the
 * receive buffer: with such a tag a message goes eagerly up to the eager limit less 24 bytes. */
#define IBMSG_TAG_COMPACT_MAX ((uint64_t)0x7fffff)

/* Bytes an endpoint address blob takes at most (see ibmsg_ep_address). */
#define IBMSG_EP_ADDRESS_MAX 64

/*
 * Vectors: one entry of a message, put or get gathered from (or scattered into) several
 * buffers. The message or transfer is the concatenation of the entries, in order; entries of
 * length 0 are allowed (their buf may be NULL) and move nothing.
 */
typedef struct ibmsg_iov {
    void *buf;               /* the entry's bytes (read for sends and puts, written otherwise) */
    size_t len;              /* its length in bytes */
    struct ibmsg_mem_s *mem; /* ibmsg_putv / ibmsg_getv: the mapping (ibmsg_mem_t, rma.h) buf
                                lies in; tagged messages: ignored (IBMSG_MEM_NULL) */
} ibmsg_iov_t;

/*
 * Entries a vector operation takes at most. 16: every entry of a queued operation keeps its
 * mapping or registration in a fixed slot (no allocation on the way), and 16 gather elements
 * fit one work request of mlx5 or Soft-RoCE in about the send-queue space the default inline
 * data takes already. A device that takes fewer gets several work requests, never an error.
 */
#define IBMSG_IOV_MAX 16

/* The completion of a request. */
typedef struct ibmsg_tag_status {
    ibmsg_ep_t source; /* receive: the endpoint the message came in on; send: the endpoint */
    uint64_t tag;      /* receive: the message's tag; send: the tag sent */
    size_t length;     /* the message's length as sent (also when truncated) */
    int error; /* IBMSG_OK, IBMSG_ERR_TRUNCATED, IBMSG_ERR_CANCELED, IBMSG_ERR_PEER_FAILED */
} ibmsg_tag_status_t;

/* What a context was opened with. */
typedef struct ibmsg_context_attr {
    char device[64];     /* device name, e.g. "rxe0" */
    int port;            /* 1-based port number */
    int gid_index;       /* -1 on IB without GRH */
    size_t eager_limit;  /* largest eager message (less 24 B above IBMSG_TAG_COMPACT_MAX) */
    size_t inline_limit; /* messages up to this many bytes go inline (0 before an endpoint) */
    uint32_t credits;    /* receive buffers posted per endpoint */
    uint32_t path_mtu;   /* port MTU in bytes */
} ibmsg_context_attr_t;

/**
 * Create a context. Settings come from the control variables (environment IBMSG_<NAME>) and,
 * when info is not IBMSG_INFO_NULL, from hints of the same names that override them for this
 * context: "device" (string), "port", "gid_index", "core_eager_limit", "core_inline_limit",
 * "core_credits", "core_sq_depth", "core_signal_interval", "core_poll_batch", "core_cq_size",
 * "verbs_timeout", "verbs_retry_cnt", "verbs_rnr_retry", "verbs_min_rnr_timer" (integers),
 * "core_wait_mode" ("spin", "sleep", "adaptive" or 0, 1, 2), "core_wait_spin_us".
 * @param info  hints, or IBMSG_INFO_NULL
 * @param ctx   out: the context
 * @return IBMSG_OK; IBMSG_ERR_NO_DEVICE when no device/port fits (the log names what was
 *         found); IBMSG_ERR_OUT_OF_RANGE / IBMSG_ERR_WRONG_TYPE for a bad hint;
 *         IBMSG_ERR_INVALID for ctx NULL.
 * Thread safety: may be called from any thread; the new context belongs to the caller.
 */
IBMSG_API int ibmsg_context_create(ibmsg_info_t info, ibmsg_context_t *ctx);

/**
 * Destroy a context with all its endpoints. Requests still outstanding are freed with it and
 * their handles become invalid.
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_context_destroy(ibmsg_context_t ctx);

/**
 * What the context was opened with.
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL arguments.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_context_query(ibmsg_context_t ctx, ibmsg_context_attr_t *attr);

/**
 * Make progress: post the messages held for one post (see ibmsg_tag_isend), poll completions,
 * match arrivals, repost receive buffers (while messages arrive, a quarter of core_credits at a
 * time; a call in which none arrives posts the rest), post queued sends and return credits.
 * Every blocking call and test / wait calls it; a program that only posts non-blocking
 * operations must call it (or test) to see them complete.
 * @param events out (may be NULL): completions handled by this call
 * @return IBMSG_OK, or IBMSG_ERR_IO when the completion queue failed.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_context_progress(ibmsg_context_t ctx, int *events);

/*
 * Sleeping instead of spinning. Every blocking call (ibmsg_request_wait, ibmsg_tag_send /
 * ibmsg_tag_recv, a world barrier) waits as the control variable core_wait_mode says (info hint
 * of the same name): spin (poll until done, the default: lowest latency, a whole core), sleep
 * (sleep on the context's fd, as ibmsg_context_wait does) or adaptive (spin for
 * core_wait_spin_us, then sleep). A program with its own event loop uses the three calls below.
 */

/**
 * The context's file descriptor: it becomes readable when the context may have work
 * (completions on any of its completion queues, the job layer's connection messages, device
 * asynchronous events, a launcher's callback). Watch it for reading (poll, select, epoll); do
 * not read it or close it. It stays the same for the context's life. Sleep on it only after
 * ibmsg_context_arm returned IBMSG_OK; after it is readable, make progress, then arm again.
 * The context's timers (the keepalive every core_keepalive_ms / 4, on-demand connection
 * resends) need progress while nothing arrives: ibmsg_context_wait wakes for them, a program's
 * own loop should use a timeout of at most that.
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL arguments.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_context_get_fd(ibmsg_context_t ctx, int *fd);

/**
 * Prepare the fd for a sleep: ask every completion queue for an event at its next completion,
 * then make progress once. No wakeup is lost in between: work that came before the arm is found
 * by that progress (IBMSG_ERR_BUSY: do not sleep, look at what completed and arm again), work
 * that comes after it makes the fd readable.
 * @return IBMSG_OK (sleep now), IBMSG_ERR_BUSY (work was there and has been progressed),
 *         IBMSG_ERR_IO when a completion queue failed, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_context_arm(ibmsg_context_t ctx);

/**
 * Progress; when nothing was there, arm and sleep on the fd until it is readable (then progress
 * again) or timeout_ms passes. Wakes in between for the context's timers (keepalive) and goes
 * back to sleep.
 * @param timeout_ms at most this many ms (coarse clock: a few ms late at most); negative: no
 *        limit; 0: do not sleep
 * @return IBMSG_OK when work may have been done (a request may have completed: test it),
 *         IBMSG_ERR_TIMEOUT when timeout_ms passed with nothing, IBMSG_ERR_IO when a completion
 *         queue failed, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_context_wait(ibmsg_context_t ctx, int timeout_ms);

/**
 * Create an endpoint: a queue pair with its receive buffers posted, not yet connected.
 * @return IBMSG_OK, IBMSG_ERR_NO_RESOURCE when the context's completion queue cannot take
 *         another endpoint or the device has no queue pair or memory registration left,
 *         IBMSG_ERR_NO_MEMORY when memory ran out (each logged, naming what ran out; nothing
 *         is left behind), IBMSG_ERR_INVALID for NULL arguments.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_create(ibmsg_context_t ctx, ibmsg_ep_t *ep);

/**
 * Write this endpoint's address blob (at most IBMSG_EP_ADDRESS_MAX bytes) for the peer.
 * @param buf  where to write it
 * @param len  in: size of buf; out: bytes written
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL arguments or a buffer that is too small.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_address(ibmsg_ep_t ep, void *buf, size_t *len);

/**
 * Connect the endpoint to the peer whose blob is given. The blob is untrusted: a malformed,
 * truncated or other-version blob is IBMSG_ERR_PROTOCOL and leaves the endpoint unconnected.
 * The peer must have created its endpoint (so its receives are posted) before this side sends;
 * the TCP helper's ibmsg_oob_ep_connect also synchronises the two sides.
 * @return IBMSG_OK, IBMSG_ERR_PROTOCOL, IBMSG_ERR_BUSY when already connected,
 *         IBMSG_ERR_INVALID for NULL arguments, or a device error.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_connect(ibmsg_ep_t ep, const void *blob, size_t len);

/**
 * Destroy an endpoint. Its outstanding requests complete with IBMSG_ERR_CANCELED (their handles
 * stay valid until test / wait frees them).
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_destroy(ibmsg_ep_t ep);

/*
 * Failures. When the peer of an endpoint dies or becomes unreachable, the endpoint fails:
 *  - its queued sends and the receives bound to it complete with IBMSG_ERR_PEER_FAILED (test /
 *    wait return it, and the status's error says it); receives for any endpoint stay posted;
 *  - new sends on it, and receives bound to it that match nothing already arrived, return
 *    IBMSG_ERR_PEER_FAILED at once; messages that arrived before the failure can still be
 *    received;
 *  - other endpoints and the context are not affected; ibmsg_ep_destroy frees it as usual.
 * Detection time: a side that has sends in flight notices within about
 * (verbs_retry_cnt + 1) * 4.096 us * 2^verbs_timeout (the queue pair's retransmission timeout;
 * defaults 6 and 14: 0.47 s; Soft-RoCE takes that plus a few ms, and never gives up with
 * verbs_retry_cnt 7, which it treats as "retry forever"). An endpoint that has received
 * nothing for core_keepalive_ms (default 1000, 0: off) is probed by the progress engine (a
 * zero-length RDMA write, invisible to the peer's application), so a side that only receives
 * or waits for credits notices within core_keepalive_ms * 5/4 plus that timeout, as long as
 * it calls progress (test, wait, blocking calls). Sends that already completed locally (eager
 * sends complete when their data is copied) are not reported again: a lost peer may have lost
 * them.
 */

/**
 * The state of an endpoint, without making progress.
 * @return IBMSG_OK while the endpoint is usable (connected, or created and not yet connected),
 *         IBMSG_ERR_PEER_FAILED once it has failed, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_status(ibmsg_ep_t ep);

/**
 * Start a send of len bytes from buf with tag to the peer of ep. The buffer must not be changed
 * until the request completes (eager sends complete as soon as the data is copied or inlined;
 * above the eager limit, rendezvous sends complete when the receiver has read the data from buf
 * with RDMA READ, which needs buf registered: see the verbs_reg_cache control variables).
 * Tags up to IBMSG_TAG_COMPACT_MAX cost no header bytes on the wire.
 * Messages started back to back leave together in one post to the device (one doorbell, a
 * system call on Soft-RoCE): up to core_send_batch (control variable, default 32) are held and
 * go when that many are held, at the next call on the context that makes progress or reports a
 * completion (ibmsg_request_test / wait, ibmsg_context_progress, the blocking calls, a world
 * barrier), or ahead of any other work on the endpoint. A program that starts sends and then
 * waits for something outside ibmsg (a socket, another library's barrier) calls one of those
 * first, or sets core_send_batch to 1 (every message posted at once).
 * @param req out: the request; free it by completing it with test / wait
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments, buf NULL with len > 0, or an endpoint
 *         that is not connected; IBMSG_ERR_PEER_FAILED when the connection has failed;
 *         IBMSG_ERR_NO_MEMORY (or another registration error) when buf cannot be registered.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_tag_isend(ibmsg_ep_t ep, const void *buf, size_t len, uint64_t tag,
                              ibmsg_request_t *req);

/**
 * Start a receive of up to len bytes into buf for a message whose tag matches (tag, mask) from
 * ep, or from any endpoint of ctx when ep is IBMSG_EP_NULL. A longer message completes with
 * IBMSG_ERR_TRUNCATED: buf holds its first len bytes and nothing past buf is written.
 * @param ctx the context (must be ep's when ep is given)
 * @param req out: the request
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments, buf NULL with len > 0, or an
 *         endpoint of another context.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_tag_irecv(ibmsg_context_t ctx, ibmsg_ep_t ep, void *buf, size_t len,
                              uint64_t tag, uint64_t mask, ibmsg_request_t *req);

/**
 * Blocking send: ibmsg_tag_isend then ibmsg_request_wait, except that the message is never
 * held for a batch (nothing could join it): it is posted at once, behind any messages the
 * endpoint holds, and then the context's held messages are posted as the wait would post them.
 * An eager message that can go at once needs no request at all.
 * @return as ibmsg_tag_isend, or the request's error.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_tag_send(ibmsg_ep_t ep, const void *buf, size_t len, uint64_t tag);

/**
 * Blocking receive: ibmsg_tag_irecv then ibmsg_request_wait.
 * @param status out (may be NULL): the completion
 * @return as ibmsg_tag_irecv, or the request's error (status is set in both cases when given).
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_tag_recv(ibmsg_context_t ctx, ibmsg_ep_t ep, void *buf, size_t len,
                             uint64_t tag, uint64_t mask, ibmsg_tag_status_t *status);

/*
 * Vector forms of send and receive: as ibmsg_tag_isend / _irecv / _send / _recv with the
 * message gathered from (or scattered into) count entries of iov (0..IBMSG_IOV_MAX). Matching,
 * ordering and truncation are those of a contiguous buffer of the entries' total length: a
 * vector send matches any receive, contiguous or vector, and a longer message completes a
 * vector receive with IBMSG_ERR_TRUNCATED, its first bytes in the entries in order and nothing
 * written past the last. The entries' mem is ignored. The iov array, like the buffers, must stay
 * unchanged until the request completes. Eager messages are copied from or to the entries (one
 * pass, no allocation); a vector send above the eager limit is packed into one staging copy
 * (allocated, and registered for that transfer only: the rendezvous protocol exposes one
 * region), while a vector receive of a rendezvous message reads straight into its entries
 * (RDMA READ with a scatter list; each entry registered through the registration cache).
 * Counted in core_iov_ops and core_iov_entries.
 * Extra errors: IBMSG_ERR_INVALID for iov NULL with count > 0, count > IBMSG_IOV_MAX, an entry
 * with buf NULL and len > 0, or lengths whose sum (or an entry's end) wraps around;
 * IBMSG_ERR_NO_MEMORY when a rendezvous send's staging copy cannot be allocated.
 */

/** ibmsg_tag_isend of the concatenation of iov[0..count). */
IBMSG_API int ibmsg_tag_isendv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t tag,
                               ibmsg_request_t *req);

/** ibmsg_tag_irecv into the entries of iov[0..count), in order. */
IBMSG_API int ibmsg_tag_irecvv(ibmsg_context_t ctx, ibmsg_ep_t ep, const ibmsg_iov_t *iov,
                               size_t count, uint64_t tag, uint64_t mask, ibmsg_request_t *req);

/** Blocking: ibmsg_tag_isendv then ibmsg_request_wait. */
IBMSG_API int ibmsg_tag_sendv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t tag);

/** Blocking: ibmsg_tag_irecvv then ibmsg_request_wait (status may be NULL). */
IBMSG_API int ibmsg_tag_recvv(ibmsg_context_t ctx, ibmsg_ep_t ep, const ibmsg_iov_t *iov,
                              size_t count, uint64_t tag, uint64_t mask,
                              ibmsg_tag_status_t *status);

/*
 * Probes: learn a message's source, tag and length before receiving it (to size the buffer).
 * They see what ibmsg_tag_irecv with the same (ctx, ep, tag, mask) would match next, under the
 * same rules (ep IBMSG_EP_NULL: any endpoint; arrival order per endpoint). A message matched by
 * a receive posted earlier is never seen. status.length is the message's full length as sent,
 * for eager and rendezvous messages alike (a rendezvous message's data stays in the sender's
 * buffer until it is received); status.error is IBMSG_OK.
 *
 * ibmsg_tag_probe leaves the message to be received: with several consumers of one context, a
 * receive posted by another may take it first. ibmsg_tag_mprobe takes the message out of
 * matching: no receive or probe sees it again, and only ibmsg_tag_imrecv of its handle receives
 * it. A matched message whose endpoint fails afterwards is still received when it was eager
 * (its bytes are here, as for any message that arrived before a failure); a rendezvous one then
 * completes its receive with IBMSG_ERR_PEER_FAILED (its data cannot be read any more). One
 * whose endpoint is destroyed before it is received is released with it: its receive completes
 * with IBMSG_ERR_CANCELED. One never received is freed by ibmsg_context_destroy, with the
 * context's requests (its handle becomes invalid); a rendezvous sender then waits for its FIN
 * until its endpoint fails, as for any message never received.
 */

/**
 * Make progress once, then look for a message matching (ep, tag, mask) without receiving it.
 * @param ep     the endpoint, or IBMSG_EP_NULL for any endpoint of ctx
 * @param found  out: 1 when a message matched (status filled), else 0
 * @param status out (may be NULL): the message's source, tag and full length
 * @return IBMSG_OK; IBMSG_ERR_PEER_FAILED when ep has failed and nothing that arrived before
 *         matches (nothing ever will); IBMSG_ERR_INVALID for NULL arguments or an endpoint of
 *         another context; IBMSG_ERR_IO when the completion queue failed.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_tag_probe(ibmsg_context_t ctx, ibmsg_ep_t ep, uint64_t tag, uint64_t mask,
                              int *found, ibmsg_tag_status_t *status);

/**
 * As ibmsg_tag_probe, but a matched message leaves matching and is returned as a handle for
 * ibmsg_tag_imrecv; *msg is IBMSG_MESSAGE_NULL when nothing matched.
 * @param msg out: the message, or IBMSG_MESSAGE_NULL
 * @return as ibmsg_tag_probe; IBMSG_ERR_NO_MEMORY when no handle could be had (the message
 *         stays to be matched).
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_tag_mprobe(ibmsg_context_t ctx, ibmsg_ep_t ep, uint64_t tag, uint64_t mask,
                               ibmsg_message_t *msg, ibmsg_tag_status_t *status);

/**
 * Start the receive of exactly the message *msg (from ibmsg_tag_mprobe) into up to len bytes of
 * buf; *msg becomes IBMSG_MESSAGE_NULL. It completes as an ibmsg_tag_irecv that matched it
 * would: a longer message completes with IBMSG_ERR_TRUNCATED (buf holds its first len bytes, and
 * nothing past buf is written); a rendezvous message is read from the sender now.
 * @param req out: the request
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments, buf NULL with len > 0, or a handle that
 *         is not a matched message (received already, or never one); IBMSG_ERR_NO_MEMORY.
 * Thread safety: the thread of the message's context only.
 */
IBMSG_API int ibmsg_tag_imrecv(ibmsg_message_t *msg, void *buf, size_t len, ibmsg_request_t *req);

/**
 * Make progress once and see whether *req has completed. When it has, *completed is 1, status
 * (if not NULL) is filled, the request is freed and *req becomes IBMSG_REQUEST_NULL.
 * @return IBMSG_OK while it is running or when it completed without error; the request's error
 *         (IBMSG_ERR_TRUNCATED, IBMSG_ERR_CANCELED, IBMSG_ERR_PEER_FAILED) when it completed
 *         with one; IBMSG_ERR_INVALID for NULL arguments.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_request_test(ibmsg_request_t *req, int *completed, ibmsg_tag_status_t *status);

/**
 * Make progress until *req completes, then as ibmsg_request_test.
 * @return the request's error, or IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_request_wait(ibmsg_request_t *req, ibmsg_tag_status_t *status);

/**
 * Cancel a request: a receive not yet matched, or a send not yet handed to the device. It then
 * completes with IBMSG_ERR_CANCELED; test / wait still has to free it. Cancelling a request
 * that has already gone further does nothing (it completes normally).
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_request_cancel(ibmsg_request_t req);

/*
 * TCP helper for the out-of-band exchange of endpoint addresses, for tools and simple
 * programs (like perftest's exchange). Messages are framed with a length; every read and write
 * has a timeout; a frame longer than the caller's buffer is an error.
 * Thread safety: a listener or connection is used by one thread at a time.
 */
typedef struct ibmsg_oob_s *ibmsg_oob_t;

/**
 * Listen on TCP port (0: an ephemeral port, see ibmsg_oob_port) of address host (NULL: any).
 * @return IBMSG_OK, IBMSG_ERR_IO when the socket cannot be bound, IBMSG_ERR_INVALID for NULL.
 */
IBMSG_API int ibmsg_oob_listen(const char *host, uint16_t port, ibmsg_oob_t *listener);

/** The local port of a listener or connection. */
IBMSG_API int ibmsg_oob_port(ibmsg_oob_t oob, uint16_t *port);

/**
 * Accept one connection on a listener within timeout_ms (negative: wait forever).
 * @return IBMSG_OK, IBMSG_ERR_TIMEOUT, IBMSG_ERR_IO, IBMSG_ERR_INVALID.
 */
IBMSG_API int ibmsg_oob_accept(ibmsg_oob_t listener, int timeout_ms, ibmsg_oob_t *conn);

/**
 * Connect to host:port, retrying refused connections until timeout_ms passes (so the client may
 * start before the server listens).
 * @return IBMSG_OK, IBMSG_ERR_TIMEOUT, IBMSG_ERR_NOT_FOUND (unknown host), IBMSG_ERR_IO.
 */
IBMSG_API int ibmsg_oob_connect(const char *host, uint16_t port, int timeout_ms, ibmsg_oob_t *conn);

/**
 * Send one frame of len bytes (at most 65536).
 * @return IBMSG_OK, IBMSG_ERR_TIMEOUT, IBMSG_ERR_PEER_FAILED (closed), IBMSG_ERR_INVALID.
 */
IBMSG_API int ibmsg_oob_send(ibmsg_oob_t conn, const void *buf, size_t len, int timeout_ms);

/**
 * Receive one frame into buf; *len is in: its size, out: the frame's length.
 * @return IBMSG_OK, IBMSG_ERR_TIMEOUT, IBMSG_ERR_PEER_FAILED (closed),
 *         IBMSG_ERR_PROTOCOL (frame longer than buf), IBMSG_ERR_INVALID.
 */
IBMSG_API int ibmsg_oob_recv(ibmsg_oob_t conn, void *buf, size_t *len, int timeout_ms);

/**
 * Exchange endpoint addresses over conn, connect ep to the peer's, and wait until the peer has
 * connected too, so that neither side sends before the other is ready.
 * @return IBMSG_OK, or the error of the exchange or of ibmsg_ep_connect.
 * Thread safety: the context's thread only (for ep).
 */
IBMSG_API int ibmsg_oob_ep_connect(ibmsg_oob_t conn, ibmsg_ep_t ep, int timeout_ms);

/** Close a listener or connection. NULL is IBMSG_ERR_INVALID. */
IBMSG_API int ibmsg_oob_close(ibmsg_oob_t oob);

#ifdef __cplusplus
}
#endif

#endif
