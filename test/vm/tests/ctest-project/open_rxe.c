/* Opens $IBMSG_TEST_DEVICE, checks port 1 is ACTIVE and creates an RC QP:
 * the smallest proof that a unit test in the guest reaches rxe. */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    const char *want = getenv("IBMSG_TEST_DEVICE");
    struct ibv_device **list = ibv_get_device_list(NULL);
    struct ibv_context *ctx = NULL;
    struct ibv_port_attr port;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_qp_init_attr attr;

    for (int i = 0; (list != NULL) && (list[i] != NULL); i++) {
        if ((want == NULL) || (strcmp(ibv_get_device_name(list[i]), want) == 0)) {
            ctx = ibv_open_device(list[i]);
            break;
        }
    }
    if (ctx == NULL) {
        fprintf(stderr, "cannot open device %s\n", want ? want : "(any)");
        return 1;
    }
    if ((ibv_query_port(ctx, 1, &port) != 0) || (port.state != IBV_PORT_ACTIVE)) {
        fprintf(stderr, "port 1 is not active\n");
        return 1;
    }
    pd = ibv_alloc_pd(ctx);
    cq = (pd != NULL) ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
    if (cq == NULL) {
        fprintf(stderr, "cannot create pd/cq\n");
        return 1;
    }
    memset(&attr, 0, sizeof(attr));
    attr.send_cq = cq;
    attr.recv_cq = cq;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 16;
    attr.cap.max_recv_wr = 16;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &attr);
    if (qp == NULL) {
        fprintf(stderr, "cannot create qp\n");
        return 1;
    }
    printf("%s: qp 0x%x created, active_mtu %d\n", ibv_get_device_name(ctx->device), qp->qp_num,
           128 << port.active_mtu);
    ibv_destroy_qp(qp);
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(list);
    return 0;
}
