/*
 * The rendezvous protocol: messages above the eager limit move zero-copy.
 *
 *   sender                                   receiver
 *   register buf (MW_BIND, cached);
 *   BIND_MW a window over exactly
 *   [buf, buf + length), read-only
 *   RTS {addr, length, window key, id}
 *       + tag (flag WINDOW)             -->  validate; match in message order like an eager
 *                                            message (posted receive, or the unexpected queue
 *                                            until one is posted)
 *                                            register the receive buffer (LOCAL_WRITE);
 *                                            RDMA READ min(length, buffer) bytes in fragments
 *                                            of core_rndv_chunk (256 KiB; 0: the port's max
 *                                            message size), up to the QP's max_rd_atomic in
 *                                            flight, so the fragments of a message overlap
 *                                       <--  FIN {addr, bytes read, key, id} as SEND_WITH_INV of
 *                                            the window key (flag INVALIDATED); the receive
 *                                            completes
 *                                            (ERR_TRUNCATED when it did not fit)
 *   validate the FIN against the
 *   outstanding transfer; the window is
 *   dead if the FIN says it invalidated
 *   it (flag INVALIDATED) or the device
 *   saw it invalidate exactly its key,
 *   else LOCAL_INV it first; the send
 *   completes
 *
 * Keys: a peer can read exactly the bytes of a message it was offered, only through its own
 * QP (type 2B windows are bound to the QP), and only until the FIN: the window's key is then
 * dead and the next bind of the same window carries another key. The sender trusts no peer to
 * invalidate: a FIN without the INVALIDATED flag (a broken peer) costs a local invalidation
 * before the send completes, and a FIN with it whose invalidation the device did not report
 * (bnxt_re never does; or a peer that lied) frees the window rather than reusing it. The
 * registration under the window stays cached, granting no remote access by itself. On a device
 * without type 2 windows, or with core_rndv_windows = 0, each send registers exactly its bytes for
 * remote read and deregisters them after the FIN (no caching of sources). A failed endpoint's QP is
 * in error: no peer reaches its windows, which are freed with the send.
 *
 * Why READ by the receiver rather than WRITE by the sender: with READ the receiver moves the
 * data when its buffer is known, so an RTS costs one message whether or not a receive is
 * posted, the receiver reads only what fits (truncation needs no extra round trip), and the
 * receive buffer is never exposed to the peer (no remote key for it ever leaves this process:
 * only the send buffer's, read-only). WRITE would need a clear-to-send carrying the receive
 * buffer's key back first (one more half round trip and a remotely writable receive buffer).
 * Completion may be out of order (a later eager message can complete first); matching is not.
 *
 * Per endpoint, at most CORE_RNDV_MAX sends wait for their FIN (more wait in the send queue),
 * so ids are checked against a table: a FIN whose id, address, length or key does not belong
 * to an outstanding send, and an RTS out of id order, of an eager size or beyond the window,
 * is rejected and counted (core_rndv_rejected), never acted on.
 */
#ifndef IBMSG_CORE_RNDV_H
#define IBMSG_CORE_RNDV_H

#include <stdint.h>

#include "core/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rendezvous sends awaiting their FIN per endpoint (a power of two). */
#define CORE_RNDV_MAX 256

struct ibmsg_request_s;
struct ibmsg_ep_s;
struct verbs_reg;
struct verbs_mw;
struct verbs_wc;

/* A memory window of an endpoint: owned by one send while bound, else on the free list. */
typedef struct core_window {
    struct verbs_mw *mw;
    struct core_window *next; /* free list */
} core_window_t;

/* A FIN waiting for a credit: its body, and whether it invalidates the sender's window. */
typedef struct core_rndv_fin {
    core_wire_rndv_t body;
    uint8_t invalidate;
} core_rndv_fin_t;

/* A request's rendezvous state (sends: from RTS to FIN; receives: from match to the FIN). */
typedef struct core_rndv_req {
    struct verbs_reg *reg; /* the user buffer's registration, NULL when nothing to read */
    core_window_t *win;    /* sends: the window the RTS offers, while bound */
    uint64_t raddr;        /* receives: the sender's buffer */
    uint64_t want;         /* receives: bytes to pull (min of message and buffer) */
    uint64_t posted;       /* receives: bytes whose READ is posted */
    uint32_t rkey;         /* the sender's key (receives: to read; sends: checked in the FIN) */
    uint32_t id;
    uint32_t reads_out;           /* receives: READs posted and not complete */
    uint8_t active;               /* between RTS and FIN: not cancellable */
    uint8_t window;               /* receives: the key is a window the FIN invalidates */
    uint8_t vector;               /* receives: into a vector (iov.h) */
    int error;                    /* receives: the completion status once the reads are done */
    struct ibmsg_request_s *next; /* the endpoint's queue of pulls to post, or of sends whose
                                     window awaits a LOCAL_INV */
} core_rndv_req_t;

/* An endpoint's rendezvous state. */
typedef struct core_rndv_ep {
    struct ibmsg_request_s **tx; /* sends awaiting FIN, by id % CORE_RNDV_MAX */
    core_rndv_fin_t *fin;        /* FINs waiting for a credit, ring of CORE_RNDV_MAX */
    uint32_t fin_head, fin_tail;
    uint32_t tx_next_id; /* id of the next RTS sent */
    uint32_t rx_next_id; /* id the next RTS received must carry */
    uint32_t rx_active;  /* RTS accepted whose FIN is not posted yet */
    uint32_t reads_out;  /* READs outstanding on the QP */
    uint32_t reads_max;  /* the QP's max_rd_atomic */
    uint32_t chunk;      /* largest READ */
    uint64_t window_max; /* largest message offered through a window (core_rndv_window_max) */
    uint64_t rejected_logged;
    struct ibmsg_request_s *pull_head, *pull_tail;     /* receives with READs to post, in order */
    struct ibmsg_request_s *unbind_head, *unbind_tail; /* sends whose window needs LOCAL_INV */
    core_window_t *win_free; /* unbound windows, reused (allocated when none is free) */
    uint8_t windows;         /* sends offer windows (device has type 2B, core_rndv_windows) */
} core_rndv_ep_t;

/** Set up an endpoint's state (at creation). Returns IBMSG_OK or IBMSG_ERR_NO_MEMORY. */
int core_rndv_ep_init(struct ibmsg_ep_s *ep);

/** Free it and its windows (the endpoint's transfers are complete or failed). */
void core_rndv_ep_cleanup(struct ibmsg_ep_s *ep);

/**
 * Start a rendezvous send (req->len above the peer's eager limit; the caller checked credits
 * and send-queue room). IBMSG_OK: the RTS is posted, req completes with the FIN.
 * IBMSG_ERR_NO_RESOURCE: try again later (no id free or no bounce buffer). Other errors: the
 * send failed (registration refused, or the endpoint failed).
 */
int core_rndv_send(struct ibmsg_ep_s *ep, struct ibmsg_request_s *req);

/**
 * An RTS or FIN arrived in descriptor d (header validated, sequence and credits taken) with
 * completion wc. Returns 1 when d is an RTS no receive matched (the caller queues it as
 * unexpected), 0 when it was consumed (pull started, FIN handled, or rejected and counted):
 * repost it.
 */
int core_rndv_arrival(struct ibmsg_ep_s *ep, const core_wire_hdr_t *hdr, const struct verbs_wc *wc);

/** A message other than a FIN invalidated one of our keys: count and log it (a broken peer). */
void core_rndv_stray_invalidation(struct ibmsg_ep_s *ep, uint32_t rkey);

/** A receive matched an RTS of ep (header rts, from the unexpected queue or on arrival). */
void core_rndv_pull(struct ibmsg_ep_s *ep, struct ibmsg_request_s *req, const core_wire_hdr_t *rts);

/** A READ of req posted on ep completed with wc status (0: success). */
void core_rndv_read_done(struct ibmsg_ep_s *ep, struct ibmsg_request_s *req, int wc_status);

/** A LOCAL_INV of send req's window posted on ep completed with wc status (0: success). */
void core_rndv_unbound(struct ibmsg_ep_s *ep, struct ibmsg_request_s *req, int wc_status);

/**
 * A send that never reached its FIN ends (its endpoint failed, or its RTS could not be posted):
 * free its window (the device invalidates it) and release its registration.
 */
void core_rndv_send_drop(struct ibmsg_ep_s *ep, struct ibmsg_request_s *req);

/** Post queued LOCAL_INVs, FINs and READs while credits, send-queue room and limits allow. */
void core_rndv_service(struct ibmsg_ep_s *ep);

/**
 * The endpoint failed: its sends awaiting FIN complete with error, pulls stop (those with
 * READs in flight complete when the flushed READs come back).
 */
void core_rndv_ep_fail(struct ibmsg_ep_s *ep, int error);

#ifdef __cplusplus
}
#endif

#endif
