/*
 * Mappings of memory for one-sided access and the remote keys of peers. Their handles live in
 * slots the context owns (chunks, freed with the context), so a handle used after unmap or
 * destroy finds a free slot and gets IBMSG_ERR_INVALID instead of touching freed memory; a slot
 * is reused only after every free one before it (LIFO), and then an old handle names the new
 * object: documented in rma.h.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/rkey.h"
#include "util/log.h"

#define CORE_RMA_CHUNK 64

struct core_rma_chunk {
    core_rma_chunk_t *next;
    core_rma_slot_t slots[CORE_RMA_CHUNK];
};

static core_rma_slot_t *slot_alloc(ibmsg_context_t ctx)
{
    core_rma_slot_t *s;

    if (ctx->rma.free == NULL) {
        core_rma_chunk_t *c = calloc(1, sizeof(*c));
        if (c == NULL) {
            return NULL;
        }
        for (int i = CORE_RMA_CHUNK; i-- > 0;) {
            c->slots[i].free.next = ctx->rma.free;
            ctx->rma.free = &c->slots[i];
        }
        c->next = ctx->rma.chunks;
        ctx->rma.chunks = c;
    }
    s = ctx->rma.free;
    ctx->rma.free = s->free.next;
    memset(s, 0, sizeof(*s));
    return s;
}

static void slot_free(ibmsg_context_t ctx, core_rma_slot_t *s)
{
    memset(s, 0, sizeof(*s));
    s->free.state = CORE_RMA_SLOT_FREE;
    s->free.next = ctx->rma.free;
    ctx->rma.free = s;
}

void core_rma_ctx_cleanup(ibmsg_context_t ctx)
{
    core_rma_chunk_t *c, *next;

    for (c = ctx->rma.chunks; c != NULL; c = next) {
        next = c->next;
        for (int i = 0; i < CORE_RMA_CHUNK; i++) {
            if (c->slots[i].state == CORE_RMA_SLOT_MEM) {
                struct ibmsg_mem_s *m = &c->slots[i].mem;
                util_warn("context: memory at 0x%llx (%llu bytes) still mapped at its end",
                          (unsigned long long)m->addr, (unsigned long long)m->len);
                verbs_mem_dereg(&m->vm);
                core_level_add(ctx->cnt, CNT_CORE_RMA_MAPPED_BYTES, -(int64_t)m->len);
            }
        }
        free(c);
    }
    ctx->rma.chunks = NULL;
    ctx->rma.free = NULL;
}

int ibmsg_mem_map(ibmsg_context_t ctx, void *addr, size_t len, unsigned flags, ibmsg_mem_t *mem_p)
{
    unsigned access = 0;
    core_rma_slot_t *s;
    int status;

    if (ctx == NULL || addr == NULL || len == 0 || mem_p == NULL ||
        (flags & ~(IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE | IBMSG_MEM_REMOTE_ATOMIC)) !=
            0) {
        return IBMSG_ERR_INVALID;
    }
    if ((flags & IBMSG_MEM_REMOTE_ATOMIC) &&
        verbs_dev_info(ctx->dev)->atomic_cap == VERBS_ATOMIC_NONE) {
        util_error("%s: the device has no remote atomics (atomic_cap NONE): memory cannot be "
                   "mapped for them",
                   verbs_dev_info(ctx->dev)->name);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    s = slot_alloc(ctx);
    if (s == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    access |= (flags & IBMSG_MEM_REMOTE_READ) ? VERBS_MEM_REMOTE_READ : 0;
    access |= (flags & IBMSG_MEM_REMOTE_WRITE) ? VERBS_MEM_REMOTE_WRITE : 0;
    access |= (flags & IBMSG_MEM_REMOTE_ATOMIC) ? VERBS_MEM_REMOTE_ATOMIC : 0;
    status = verbs_mem_reg(ctx->dev, addr, len, access, &s->mem.vm);
    if (status != IBMSG_OK) {
        slot_free(ctx, s);
        return status;
    }
    s->mem.state = CORE_RMA_SLOT_MEM;
    s->mem.flags = flags;
    s->mem.ctx = ctx;
    s->mem.addr = (uintptr_t)addr;
    s->mem.len = len;
    core_level_add(ctx->cnt, CNT_CORE_RMA_MAPPED_BYTES, (int64_t)len);
    *mem_p = &s->mem;
    return IBMSG_OK;
}

int ibmsg_mem_unmap(ibmsg_mem_t mem)
{
    ibmsg_context_t ctx;
    int status;

    if (mem == NULL || mem->state != CORE_RMA_SLOT_MEM) {
        return IBMSG_ERR_INVALID;
    }
    if (mem->inflight != 0) {
        util_error("memory at 0x%llx: %llu operations on it are outstanding: flush first",
                   (unsigned long long)mem->addr, (unsigned long long)mem->inflight);
        return IBMSG_ERR_BUSY;
    }
    ctx = mem->ctx;
    status = verbs_mem_dereg(&mem->vm);
    if (status != IBMSG_OK) {
        return status;
    }
    core_level_add(ctx->cnt, CNT_CORE_RMA_MAPPED_BYTES, -(int64_t)mem->len);
    slot_free(ctx, (core_rma_slot_t *)mem);
    return IBMSG_OK;
}

int ibmsg_mem_rkey_pack(ibmsg_mem_t mem, void *buf, size_t *len)
{
    core_rkey_blob_t k;

    if (mem == NULL || buf == NULL || len == NULL || mem->state != CORE_RMA_SLOT_MEM ||
        *len < IBMSG_RKEY_BLOB_SIZE || mem->flags == 0) {
        return IBMSG_ERR_INVALID;
    }
    k.base = mem->addr;
    k.length = mem->len;
    k.rkey = mem->vm.rkey;
    k.access = (uint8_t)mem->flags;
    if (core_rkey_pack(&k, buf, *len) != IBMSG_OK) {
        return IBMSG_ERR_INVALID;
    }
    *len = IBMSG_RKEY_BLOB_SIZE;
    return IBMSG_OK;
}

int ibmsg_rkey_unpack(ibmsg_ep_t ep, const void *blob, size_t len, ibmsg_rkey_t *rkey_p)
{
    core_rkey_blob_t k;
    core_rma_slot_t *s;
    const char *why = NULL;
    int status;

    if (ep == NULL || blob == NULL || rkey_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    status = core_rkey_unpack(blob, len, &k, &why);
    if (status != IBMSG_OK) {
        core_cnt_inc(ep->cnt, CNT_CORE_RMA_RKEYS_REJECTED);
        util_error("qp 0x%x: rejected a remote key blob of %zu bytes: %s", ep->qpn, len, why);
        return status;
    }
    s = slot_alloc(ep->ctx);
    if (s == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    s->rkey.state = CORE_RMA_SLOT_RKEY;
    s->rkey.rkey = k.rkey;
    s->rkey.access = k.access;
    s->rkey.ep = ep;
    s->rkey.ctx = ep->ctx;
    s->rkey.base = k.base;
    s->rkey.length = k.length;
    *rkey_p = &s->rkey;
    return IBMSG_OK;
}

int ibmsg_rkey_destroy(ibmsg_rkey_t rkey)
{
    if (rkey == NULL || rkey->state != CORE_RMA_SLOT_RKEY) {
        return IBMSG_ERR_INVALID;
    }
    slot_free(rkey->ctx, (core_rma_slot_t *)rkey);
    return IBMSG_OK;
}

int ibmsg_rkey_range(ibmsg_rkey_t rkey, uint64_t *base, uint64_t *length)
{
    if (rkey == NULL || rkey->state != CORE_RMA_SLOT_RKEY) {
        return IBMSG_ERR_INVALID;
    }
    if (base != NULL) {
        *base = rkey->base;
    }
    if (length != NULL) {
        *length = rkey->length;
    }
    return IBMSG_OK;
}
