/*
 * The set-up the one-sided tests share (write.c, atomic.c): the server maps its target memory
 * and sends the packed key over the TCP connection; the client unpacks it on its endpoint.
 */
#include <ibmsg/rma.h>

#include "perf/tools/lib/engine.h"

int perf_rma_offer(perf_conn_t *c, void *buf, size_t size, unsigned flags, ibmsg_mem_t *mem)
{
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t blen = sizeof(blob);
    int ret = ibmsg_mem_map(c->ctx, buf, size, flags, mem);

    if (ret != IBMSG_OK) {
        *mem = IBMSG_MEM_NULL;
        return perf_fail("map the target memory", ret);
    }
    ret = ibmsg_mem_rkey_pack(*mem, blob, &blen);
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_send(c->oob, blob, blen, PERF_OOB_TIMEOUT);
    }
    if (ret == IBMSG_OK) {
        ret = perf_barrier(c);
    }
    return ret == IBMSG_OK ? IBMSG_OK : perf_fail("send the target's key", ret);
}

int perf_rma_accept(perf_conn_t *c, ibmsg_rkey_t *rkey, uint64_t *raddr)
{
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t blen = sizeof(blob);
    int ret = ibmsg_oob_recv(c->oob, blob, &blen, PERF_OOB_TIMEOUT);

    *rkey = IBMSG_RKEY_NULL;
    if (ret != IBMSG_OK || (ret = ibmsg_rkey_unpack(c->ep, blob, blen, rkey)) != IBMSG_OK) {
        return perf_fail("receive the server's key", ret);
    }
    return ibmsg_rkey_range(*rkey, raddr, NULL); /* the server's memory starts here */
}
