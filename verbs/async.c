/* Asynchronous device events, read without blocking. */
#include "verbs/async.h"

#include "verbs/verbs_priv.h"

void verbs_async_translate(const struct ibv_async_event *e, verbs_async_event_t *ev)
{
    ev->raw = (int)e->event_type;
    ev->qpn = 0;
    ev->port = 0;
    switch (e->event_type) {
    case IBV_EVENT_SRQ_LIMIT_REACHED:
        ev->type = VERBS_ASYNC_SRQ_LIMIT;
        break;
    case IBV_EVENT_SRQ_ERR:
        ev->type = VERBS_ASYNC_SRQ_ERR;
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
        ev->type = VERBS_ASYNC_QP_FATAL;
        ev->qpn = e->element.qp->qp_num;
        break;
    case IBV_EVENT_QP_LAST_WQE_REACHED:
        ev->type = VERBS_ASYNC_QP_LAST_WQE;
        ev->qpn = e->element.qp->qp_num;
        break;
    case IBV_EVENT_CQ_ERR:
        ev->type = VERBS_ASYNC_CQ_ERR;
        break;
    case IBV_EVENT_PORT_ERR:
        ev->type = VERBS_ASYNC_PORT_DOWN;
        ev->port = (int)e->element.port_num;
        break;
    case IBV_EVENT_PORT_ACTIVE:
        ev->type = VERBS_ASYNC_PORT_UP;
        ev->port = (int)e->element.port_num;
        break;
    case IBV_EVENT_DEVICE_FATAL:
        ev->type = VERBS_ASYNC_DEVICE_FATAL;
        break;
    case IBV_EVENT_GID_CHANGE:
    case IBV_EVENT_LID_CHANGE:
        ev->type = VERBS_ASYNC_ADDRESS;
        ev->port = (int)e->element.port_num;
        break;
    default:
        ev->type = VERBS_ASYNC_OTHER;
        break;
    }
}

const char *verbs_async_string(const verbs_async_event_t *ev)
{
    return ibv_event_type_str((enum ibv_event_type)ev->raw);
}
