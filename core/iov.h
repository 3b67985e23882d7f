/*
 * Private to core/: vector operations (ibmsg_iov_t) - the checks of the caller's entries, the
 * gather and scatter copies of eager messages, the scatter/gather lists of RDMA work requests,
 * and the per-operation state a vector needs beyond a request (iov.c).
 *
 * A request of a vector operation points at the caller's entries (which must stay unchanged
 * until it completes) and, when it needs them, at an extension from the context's pool: the
 * mapping of each entry (puts and gets: their in-flight counts) or its registration (a
 * rendezvous receive), and a rendezvous send's packed copy. The pool is a free list grown by
 * chunks, so a vector operation allocates nothing on its way but that packed copy, and a
 * contiguous request stays as small as before (one pointer and a count).
 */
#ifndef IBMSG_CORE_IOV_H
#define IBMSG_CORE_IOV_H

#include <stddef.h>
#include <stdint.h>

#include <ibmsg/ibmsg.h>

#include "verbs/qp.h"
#include "verbs/reg_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibmsg_context_s;
struct ibmsg_request_s;
struct ibmsg_mem_s;

/* What a vector operation holds per entry, and a rendezvous send's packed copy. */
typedef struct core_iov_ext {
    struct core_iov_ext *free_next;
    void *stage;  /* malloc'd copy of a rendezvous send's entries, or NULL */
    uint8_t regs; /* hold[] are registrations (a rendezvous receive's entries), else mappings */
    uint8_t in_use;
    union {
        struct ibmsg_mem_s *mem; /* putv / getv: the entry's mapping (NULL: inline) */
        verbs_reg_t *reg;        /* a rendezvous receive: the entry's registration (NULL: none) */
    } hold[IBMSG_IOV_MAX];
} core_iov_ext_t;

typedef struct core_iov_chunk core_iov_chunk_t;

/* A context's pool of extensions. */
typedef struct core_iov_ctx {
    core_iov_ext_t *free;
    core_iov_chunk_t *chunks;
} core_iov_ctx_t;

/* A request's vector (iov NULL: its contiguous buf and len). */
typedef struct core_iov_req {
    const ibmsg_iov_t *iov;
    uint32_t cnt;
    core_iov_ext_t *ext; /* NULL until needed */
} core_iov_req_t;

/**
 * Check the caller's entries: iov NULL with count > 0, count > IBMSG_IOV_MAX, an entry with buf
 * NULL and len > 0, an entry whose end wraps or a total that wraps are IBMSG_ERR_INVALID
 * (logged). *total: the sum of the lengths.
 */
int core_iov_check(const ibmsg_iov_t *iov, size_t count, size_t *total);

/** Copy the first n bytes of the entries' concatenation to dst (an eager send). */
void core_iov_gather(void *dst, const ibmsg_iov_t *iov, uint32_t cnt, size_t n);

/** Copy n bytes from src over the entries, in order (n at most their total: an eager receive). */
void core_iov_scatter(const ibmsg_iov_t *iov, uint32_t cnt, const void *src, size_t n);

/**
 * The gather/scatter list of one work request: from byte off of the vector, at most max_bytes
 * in at most max_sge elements (entries of length 0 take none), each with its entry's key (the
 * extension's mapping or registration; 0 without one: inline). Returns the bytes covered (> 0
 * when max_bytes > 0 and off is before the end) and sets *nsge.
 */
uint32_t core_iov_sges(const core_iov_req_t *v, uint64_t off, uint64_t max_bytes, uint32_t max_sge,
                       verbs_sge_t *sge, int *nsge);

/** An extension for req's vector (cleared); NULL when memory ran out. */
core_iov_ext_t *core_iov_ext_get(struct ibmsg_context_s *ctx);

/** req is freed: its extension (with a packed copy) goes back to the pool. */
void core_iov_release(struct ibmsg_context_s *ctx, core_iov_req_t *v);

/** The context ends: free the pool, and the packed copies of requests never freed. */
void core_iov_ctx_cleanup(struct ibmsg_context_s *ctx);

/**
 * A rendezvous receive into a vector pulls want bytes: register the entries that hold them
 * (through the registration cache, local write). IBMSG_OK, or the error with nothing held.
 */
int core_iov_register(struct ibmsg_context_s *ctx, core_iov_req_t *v, uint64_t want);

/** The pull ended: its registrations go back to the cache. */
void core_iov_unregister(struct ibmsg_context_s *ctx, core_iov_req_t *v);

/**
 * A vector send above the eager limit: pack its len bytes into a staging copy (the rendezvous
 * protocol exposes one region) that becomes req->buf. IBMSG_ERR_NO_MEMORY when it cannot be.
 */
int core_iov_stage(struct ibmsg_request_s *req);

#ifdef __cplusplus
}
#endif

#endif
