/*
 * ibmsg one-sided operations: memory mapped for remote access, its remote key packed into a
 * blob for the peer (sent over any channel), and non-blocking put (RDMA WRITE) and get (RDMA
 * READ) into a peer's mapped memory through an endpoint, with a flush that completes every
 * one-sided operation of an endpoint.
 *
 * Local buffers: a put or get names the mapped memory (ibmsg_mem_t) its local buffer lies in:
 * nothing is registered on the fly, so the hot path makes no system call besides the post.
 * A put small enough to go inline (ibmsg_rma_attr: inline_limit) needs no mapping: pass
 * IBMSG_MEM_NULL. The local buffer of a put must not change, and that of a get must not be read,
 * until the operation completes.
 *
 * Remote bounds: the packed key carries the base address and length of the peer's mapping, so
 * an access outside it is refused locally with IBMSG_ERR_OUT_OF_BOUNDS (nothing is posted, and
 * the refusal is counted in core_rma_refused_out_of_bounds), and one the key does not permit
 * (a put to memory mapped without IBMSG_MEM_REMOTE_WRITE) with IBMSG_ERR_ACCESS.
 *
 * Completion: with a request (req not NULL) an operation completes through ibmsg_request_test /
 * wait like a message (status.length: the bytes moved); a put is complete when the peer's device
 * has acknowledged the data, a get when the data is in the local buffer. With req NULL the
 * operation is implicit: it completes with the next flush of its endpoint (fewer completions
 * to signal and poll: the fast way to issue many). One-sided operations of one endpoint are
 * executed in the order they were issued. A tagged message is ordered after the puts issued
 * before it only once they have completed: put, flush, then send the notification.
 *
 * Queueing: an operation is split into work requests of at most the port's maximum message
 * size; when the endpoint's send queue is full, the rest waits in the endpoint's queue and is
 * posted by progress as room frees up. So put and get do not return IBMSG_ERR_BUSY; the memory
 * of a queued operation is bounded by the caller's own outstanding requests. RDMA READs in
 * flight are limited by the queue pair's max_rd_atomic (the device's limit and the peer's, at
 * most 16, agreed at connection; verbs_max_rd_atomic lowers it): more gets wait in the device,
 * in order. A put or message issued behind a get in flight is fenced: it starts once the get's
 * data has been read. A get or put the device refuses (ibmsg_request_wait: IBMSG_ERR_INVALID or
 * IBMSG_ERR_NOT_SUPPORTED) fails alone; the endpoint stays usable.
 *
 * Atomics: 64-bit fetch-and-add and compare-and-swap on a peer's mapped word (memory mapped with
 * IBMSG_MEM_REMOTE_ATOMIC), non-blocking like put and get and queued with them in issue order;
 * the word the target held is written to a local 8-byte result (any memory: the device writes
 * to a registered cell of the endpoint and the library copies it when the operation completes).
 * They are atomic against other atomics through the same device (atomic_cap HCA, as on
 * Soft-RoCE) or against every agent (GLOB); where the device has none they are
 * IBMSG_ERR_NOT_SUPPORTED. On devices of atomic_cap HCA, the CPU must not update the target word
 * while remote atomics may hit it. Like gets, they count against max_rd_atomic, and a put or
 * message behind them is fenced.
 *
 * Thread safety: as for the rest of ibmsg.h: the context's thread only.
 */
#ifndef IBMSG_RMA_H
#define IBMSG_RMA_H

#include <stddef.h>
#include <stdint.h>

#include <ibmsg/ibmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ibmsg_mem_s *ibmsg_mem_t;
typedef struct ibmsg_rkey_s *ibmsg_rkey_t;

#define IBMSG_MEM_NULL  ((ibmsg_mem_t)0)
#define IBMSG_RKEY_NULL ((ibmsg_rkey_t)0)

/* Remote access granted by ibmsg_mem_map (local access is always granted). */
#define IBMSG_MEM_REMOTE_READ   0x1u
#define IBMSG_MEM_REMOTE_WRITE  0x2u
#define IBMSG_MEM_REMOTE_ATOMIC 0x4u /* remote 64-bit atomics (ibmsg_atomic_*) */

/* Bytes a packed remote key takes (ibmsg_mem_rkey_pack). */
#define IBMSG_RKEY_BLOB_SIZE 24

/* What one-sided operations on an endpoint can do. */
typedef struct ibmsg_rma_attr {
    size_t inline_limit;    /* puts of up to this many bytes go inline: no local mapping needed */
    size_t max_fragment;    /* largest work request; longer operations are split */
    uint32_t max_rd_atomic; /* RDMA READs in flight per endpoint */
} ibmsg_rma_attr_t;

/**
 * Map [addr, addr + len) for one-sided access: register it with the context's device.
 * @param flags IBMSG_MEM_REMOTE_READ, IBMSG_MEM_REMOTE_WRITE and/or IBMSG_MEM_REMOTE_ATOMIC (0:
 *              local use only, for the local buffers of puts and gets)
 * @param mem   out: the mapping
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments, len 0 or unknown flags;
 *         IBMSG_ERR_NOT_SUPPORTED for IBMSG_MEM_REMOTE_ATOMIC on a device without atomics;
 *         IBMSG_ERR_NO_RESOURCE when the device (or the locked-memory limit) refuses;
 *         IBMSG_ERR_NO_MEMORY.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_mem_map(ibmsg_context_t ctx, void *addr, size_t len, unsigned flags,
                            ibmsg_mem_t *mem);

/**
 * Unmap: deregister. The handle is invalid afterwards; until a later ibmsg_mem_map reuses its
 * slot, using it is IBMSG_ERR_INVALID (not undefined behaviour). Peers that still hold its key
 * get a remote access error on their endpoint when they use it.
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL or an unmapped handle; IBMSG_ERR_BUSY while an
 *         operation whose local buffer lies in it is outstanding (flush first).
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_mem_unmap(ibmsg_mem_t mem);

/**
 * Pack the remote key of a mapping for a peer: a versioned blob of IBMSG_RKEY_BLOB_SIZE bytes
 * with the base address, length, access and device key (see core/rkey.h for the layout).
 * @param buf where to write it
 * @param len in: size of buf; out: bytes written
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments, an unmapped handle, a mapping without
 *         remote access, or a buffer that is too small.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_mem_rkey_pack(ibmsg_mem_t mem, void *buf, size_t *len);

/**
 * Unpack a peer's remote key for use on ep (the endpoint connected to that peer). The blob is
 * untrusted: every field is validated (size, version, reserved bits, access, a non-empty range
 * that does not wrap around the address space); a bad blob is rejected and counted in
 * core_rma_rkeys_rejected.
 * @param rkey out: the key (bound to ep)
 * @return IBMSG_OK; IBMSG_ERR_PROTOCOL for a malformed blob; IBMSG_ERR_INVALID for NULL
 *         arguments; IBMSG_ERR_NO_MEMORY.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_rkey_unpack(ibmsg_ep_t ep, const void *blob, size_t len, ibmsg_rkey_t *rkey);

/**
 * The range of the peer's mapping that a key covers: its base address (where puts and gets
 * may start) and length. Either output may be NULL.
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL or a destroyed key.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_rkey_range(ibmsg_rkey_t rkey, uint64_t *base, uint64_t *length);

/**
 * Destroy an unpacked key. Operations already issued with it are not affected. Using it
 * afterwards is IBMSG_ERR_INVALID until its slot is reused.
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL or a destroyed key.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_rkey_destroy(ibmsg_rkey_t rkey);

/**
 * Start a put: write len bytes from buf to the peer's remote_addr (an address in the peer's
 * mapping that rkey describes) with RDMA WRITE.
 * @param lmem the mapping buf lies in; IBMSG_MEM_NULL allowed when len fits inline (or is 0)
 * @param req  out: the request, completed by test / wait; NULL: implicit, completed by the
 *             endpoint's next flush
 * len 0 is valid (remote_addr must then lie in the range or at its end): nothing is posted and
 * the request is complete at once; it counts as an operation of 0 bytes.
 * @return IBMSG_OK; IBMSG_ERR_OUT_OF_BOUNDS when [remote_addr, remote_addr + len) is not inside
 *         the key's range; IBMSG_ERR_ACCESS when the key does not grant remote write;
 *         IBMSG_ERR_INVALID for NULL arguments, a destroyed or unmapped handle, a key of another
 *         endpoint, a local buffer not inside lmem, or an endpoint that is not connected;
 *         IBMSG_ERR_PEER_FAILED when the connection has failed; IBMSG_ERR_NO_MEMORY.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_put(ibmsg_ep_t ep, const void *buf, size_t len, ibmsg_mem_t lmem,
                        uint64_t remote_addr, ibmsg_rkey_t rkey, ibmsg_request_t *req);

/**
 * Start a get: read len bytes from the peer's remote_addr into buf with RDMA READ. As ibmsg_put,
 * except that lmem is always needed for len > 0 and the key must grant remote read
 * (IBMSG_ERR_ACCESS otherwise).
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_get(ibmsg_ep_t ep, void *buf, size_t len, ibmsg_mem_t lmem,
                        uint64_t remote_addr, ibmsg_rkey_t rkey, ibmsg_request_t *req);

/**
 * Vector forms of put and get: the local side is the concatenation of iov[0..count) (each
 * entry's mem the mapping its buf lies in), the remote side the contiguous range of their total
 * length at remote_addr. One RDMA WRITE or READ carries as many entries as the device's gather
 * limit allows (max_send_sge; READs also max_sge_rd; core_iov_sge_max lowers it); beyond it the
 * operation is split into several work requests at consecutive remote offsets, so the bytes
 * land exactly as one put or get of a contiguous buffer would put them, in issue order with the
 * endpoint's other one-sided operations (a put behind a get is fenced as usual). A putv whose
 * total fits inline may leave every mem IBMSG_MEM_NULL. The iov array, like the buffers, must
 * stay unchanged until the operation completes. Counted in core_iov_ops and core_iov_entries
 * (and as one put or get of the total length).
 * @return as ibmsg_put / ibmsg_get; also IBMSG_ERR_INVALID for iov NULL with count > 0,
 *         count > IBMSG_IOV_MAX, an entry with buf NULL and len > 0, an entry not inside its
 *         mapping (or without one), or lengths whose sum wraps around; IBMSG_ERR_OUT_OF_BOUNDS
 *         when the remote range of the total length is not inside the key's range.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_putv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t remote_addr,
                         ibmsg_rkey_t rkey, ibmsg_request_t *req);

/** ibmsg_get into the entries of iov[0..count), in order: see ibmsg_putv. */
IBMSG_API int ibmsg_getv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t remote_addr,
                         ibmsg_rkey_t rkey, ibmsg_request_t *req);

/**
 * Start a 64-bit fetch-and-add: the peer's word at remote_addr becomes word + add, and the word
 * it held is written to *result when the operation completes (wrapping modulo 2^64).
 * @param result where the previous value goes (8 bytes, any alignment); not to be read until
 *               the operation completes
 * @param req    out: the request (status.length 8); NULL: implicit, complete (and *result
 *               written) with the endpoint's next flush
 * @return IBMSG_OK; IBMSG_ERR_OUT_OF_BOUNDS when remote_addr is not 8-byte aligned or
 *         [remote_addr, remote_addr + 8) is not inside the key's range (nothing is posted);
 *         IBMSG_ERR_ACCESS when the key does not grant IBMSG_MEM_REMOTE_ATOMIC;
 *         IBMSG_ERR_NOT_SUPPORTED when the device has no atomics (logged, naming it);
 *         IBMSG_ERR_INVALID for NULL arguments (result included), a destroyed key, a key of another
 *         endpoint or an endpoint that is not connected; IBMSG_ERR_PEER_FAILED;
 *         IBMSG_ERR_NO_MEMORY (also when the endpoint's result cells, registered at its first
 *         atomic, cannot be).
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_atomic_fetch_add64(ibmsg_ep_t ep, uint64_t add, uint64_t *result,
                                       uint64_t remote_addr, ibmsg_rkey_t rkey,
                                       ibmsg_request_t *req);

/**
 * Start a 64-bit compare-and-swap: where the peer's word at remote_addr equals compare, it
 * becomes swap; the word it held (equal to compare when the swap happened) goes to *result. As
 * ibmsg_atomic_fetch_add64 otherwise.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_atomic_cswap64(ibmsg_ep_t ep, uint64_t compare, uint64_t swap, uint64_t *result,
                                   uint64_t remote_addr, ibmsg_rkey_t rkey, ibmsg_request_t *req);

/**
 * Start a flush of ep: the request completes when every one-sided operation issued on ep
 * before it has completed (implicit ones included). Puts are then in the peer's memory: a
 * message sent afterwards arrives after their data. With operations outstanding, it posts one
 * signalled zero-length RDMA WRITE behind them.
 * @param req out: the request, completed by test / wait (with the first error of the flushed
 *            operations' endpoint, IBMSG_ERR_PEER_FAILED, when the connection failed)
 * @return IBMSG_OK; IBMSG_ERR_INVALID for NULL arguments or an endpoint that is not connected;
 *         IBMSG_ERR_PEER_FAILED; IBMSG_ERR_NO_MEMORY.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_flush(ibmsg_ep_t ep, ibmsg_request_t *req);

/**
 * Blocking flush: ibmsg_ep_flush then ibmsg_request_wait.
 * @return as ibmsg_ep_flush, or the flush's error.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_ep_flush_wait(ibmsg_ep_t ep);

/**
 * What one-sided operations on ep can do (inline limit, fragment size, reads in flight).
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL arguments.
 * Thread safety: the context's thread only.
 */
IBMSG_API int ibmsg_rma_query(ibmsg_ep_t ep, ibmsg_rma_attr_t *attr);

#ifdef __cplusplus
}
#endif

#endif
