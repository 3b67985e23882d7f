/* ibmsg traffic for mpit_traffic.c: see traffic.h. */
#include "traffic.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/ibmsg.h>

static ibmsg_context_t traffic_ctx = IBMSG_CONTEXT_NULL;
static ibmsg_ep_t traffic_a = IBMSG_EP_NULL;
static ibmsg_ep_t traffic_b = IBMSG_EP_NULL;

static int traffic_fail(const char *what, int status)
{
    fprintf(stderr, "traffic: %s: %s\n", what, ibmsg_status_string(status));
    return -1;
}

int traffic_open(void)
{
    uint8_t blob_a[IBMSG_EP_ADDRESS_MAX], blob_b[IBMSG_EP_ADDRESS_MAX];
    size_t len_a = sizeof(blob_a), len_b = sizeof(blob_b);
    int ret = ibmsg_context_create(IBMSG_INFO_NULL, &traffic_ctx);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        return TRAFFIC_NO_DEVICE;
    }
    if (ret != IBMSG_OK) {
        return traffic_fail("context", ret);
    }
    if ((ret = ibmsg_ep_create(traffic_ctx, &traffic_a)) != IBMSG_OK ||
        (ret = ibmsg_ep_create(traffic_ctx, &traffic_b)) != IBMSG_OK ||
        (ret = ibmsg_ep_address(traffic_a, blob_a, &len_a)) != IBMSG_OK ||
        (ret = ibmsg_ep_address(traffic_b, blob_b, &len_b)) != IBMSG_OK ||
        (ret = ibmsg_ep_connect(traffic_a, blob_b, len_b)) != IBMSG_OK ||
        (ret = ibmsg_ep_connect(traffic_b, blob_a, len_a)) != IBMSG_OK) {
        return traffic_fail("endpoints", ret);
    }
    return 0;
}

int traffic_run(int n, size_t len)
{
    char *out = malloc(len + 1);
    char *in = malloc(len + 1);
    int ret = IBMSG_OK;

    if (out == NULL || in == NULL) {
        free(out);
        free(in);
        return traffic_fail("buffers", IBMSG_ERR_NO_MEMORY);
    }
    memset(out, 0x5a, len + 1);
    for (int i = 0; i < n && ret == IBMSG_OK; i++) {
        ibmsg_request_t req;
        ibmsg_tag_status_t st;
        uint64_t tag = 1000 + (uint64_t)i;
        ret = ibmsg_tag_irecv(traffic_ctx, traffic_b, in, len, tag, IBMSG_TAG_MASK_EXACT, &req);
        if (ret == IBMSG_OK) {
            ret = ibmsg_tag_send(traffic_a, out, len, tag);
        }
        if (ret == IBMSG_OK) {
            ret = ibmsg_request_wait(&req, &st);
        }
        if (ret == IBMSG_OK && st.length != len) {
            fprintf(stderr, "traffic: message %d: %zu bytes, expected %zu\n", i, st.length, len);
            ret = IBMSG_ERR_PROTOCOL;
        }
    }
    free(out);
    free(in);
    return ret == IBMSG_OK ? 0 : traffic_fail("message", ret);
}

void traffic_close(void)
{
    if (traffic_a != IBMSG_EP_NULL) {
        ibmsg_ep_destroy(traffic_a);
    }
    if (traffic_b != IBMSG_EP_NULL) {
        ibmsg_ep_destroy(traffic_b);
    }
    if (traffic_ctx != IBMSG_CONTEXT_NULL) {
        ibmsg_context_destroy(traffic_ctx);
    }
    traffic_a = traffic_b = IBMSG_EP_NULL;
    traffic_ctx = IBMSG_CONTEXT_NULL;
}
