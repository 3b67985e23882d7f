/*
 * Private to core/: one-sided operations (rma.c) and the mappings and keys they use (mem.c).
 * The per-endpoint and per-request state is embedded in the core's structures (core.h).
 */
#ifndef IBMSG_CORE_RMA_H
#define IBMSG_CORE_RMA_H

#include <stddef.h>
#include <stdint.h>

#include <ibmsg/rma.h>

#include "core/match.h"
#include "verbs/mem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibmsg_ep_s;
struct ibmsg_context_s;
struct ibmsg_request_s;

/* Handle states: a live mapping or key, or a free slot (a stale handle is recognised). */
enum {
    CORE_RMA_SLOT_FREE = 0,
    CORE_RMA_SLOT_MEM = 0x6d656d31,  /* "mem1" */
    CORE_RMA_SLOT_RKEY = 0x726b7931, /* "rky1" */
};

struct ibmsg_mem_s {
    uint32_t state; /* CORE_RMA_SLOT_MEM */
    unsigned flags;
    struct ibmsg_context_s *ctx;
    uint64_t addr;
    uint64_t len;
    verbs_mem_t vm;
    uint64_t inflight; /* operations whose local buffer lies here, not yet complete */
};

struct ibmsg_rkey_s {
    uint32_t state; /* CORE_RMA_SLOT_RKEY */
    uint32_t rkey;
    uint8_t access;
    struct ibmsg_ep_s *ep;
    struct ibmsg_context_s *ctx;
    uint64_t base;
    uint64_t length;
};

/* A handle slot: mappings and keys share one free list per context. */
typedef union core_rma_slot {
    uint32_t state;
    struct ibmsg_mem_s mem;
    struct ibmsg_rkey_s rkey;
    struct {
        uint32_t state;
        union core_rma_slot *next;
    } free;
} core_rma_slot_t;

typedef struct core_rma_chunk core_rma_chunk_t;

/* A context's handle slots (zero = empty). */
typedef struct core_rma_ctx {
    core_rma_slot_t *free;
    core_rma_chunk_t *chunks;
} core_rma_ctx_t;

/* An endpoint's one-sided state. */
typedef struct core_rma_ep {
    core_mq_list_t pending; /* operations and flush markers not yet fully posted, in order */
    uint64_t outstanding;   /* operations issued and not complete (markers included) */
    uint64_t last_raddr;    /* target of the latest posted operation: where a marker goes */
    uint32_t last_rkey;
    /* Send-queue position just past the newest get's READ while no WRITE or SEND has been
       fenced behind it (0: none): see core_ep_fence. */
    uint64_t read_end;
    /* Where the device writes atomics' results: one 8-byte cell per send-queue slot (an atomic
       owns its slot's cell until it completes), registered at the endpoint's first atomic. */
    uint64_t *cells;
    verbs_mem_t cells_mem;
    uint32_t inline_max;   /* puts of up to this many bytes go inline */
    uint32_t max_fragment; /* largest work request */
    uint32_t max_rd_atomic;
    /* Elements of one work request's gather/scatter list (vectors, iov.h): WRITE and SEND
       (max_send_sge), READ (also the device's max_sge_rd); core_iov_sge_max lowers both. */
    uint32_t sge_wr;
    uint32_t sge_rd;
} core_rma_ep_t;

/* Operation kinds (struct ibmsg_request_s rma.op). */
enum {
    CORE_RMA_PUT = 1,
    CORE_RMA_GET = 2,
    CORE_RMA_MARKER = 3, /* a flush's zero-length signalled WRITE */
    CORE_RMA_FETCH_ADD = 4,
    CORE_RMA_CSWAP = 5,
};

/* A request's one-sided state (its buf and len are the local buffer). */
typedef struct core_rma_req {
    uint64_t raddr;
    uint64_t posted; /* bytes posted so far */
    uint32_t rkey;
    uint32_t lkey;
    struct ibmsg_mem_s *lmem; /* NULL for inline puts, markers and atomics */
    uint64_t operand;         /* atomics: the addend, or the value compared */
    uint64_t swap;            /* compare-and-swap: the value stored */
    uint32_t cell;            /* atomics: the send-queue slot whose result cell it uses */
    uint8_t op;
    uint8_t implicit; /* no user handle: released on completion */
    uint8_t is_inline;
} core_rma_req_t;

/* rma.c */
/** Set up an endpoint's one-sided state once its queue pair exists. */
void core_rma_ep_init(struct ibmsg_ep_s *ep);
/** Post queued operations while the send queue has room. */
void core_rma_service(struct ibmsg_ep_s *ep);
/** The last work request of an operation completed (error: IBMSG_OK or its error). */
void core_rma_complete(struct ibmsg_ep_s *ep, struct ibmsg_request_s *req, int error);
/** The endpoint failed or closes: queued operations complete with error. */
void core_rma_ep_fail(struct ibmsg_ep_s *ep, int error);
/** Free the endpoint's one-sided resources (its atomic result cells). */
void core_rma_ep_cleanup(struct ibmsg_ep_s *ep);

/* mem.c */
/** Deregister every live mapping and free the slots (context destruction). */
void core_rma_ctx_cleanup(struct ibmsg_context_s *ctx);

#ifdef __cplusplus
}
#endif

#endif
