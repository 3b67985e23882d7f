/*
 * The world (include/ibmsg/world.h): bootstrap from the environment, then wireup.
 *
 * On demand (default, world_wireup=1): every process creates one UD queue pair (the connection
 * manager, world/wireup.c), publishes its 32-byte address under "ibmsg.ud" and fences once with
 * data collection. No RC endpoint exists after init; ibmsg_world_ep creates one and asks the peer
 * over UD, and a peer's request creates ours, so a process holds endpoints only to the ranks it
 * talks to (a ring: 2, whatever the job size). Barriers make progress while they wait, because a
 * peer may need this process to answer its connect request before it can reach the barrier.
 *
 * Eager (world_wireup=0, and always over TCP): every process creates its size-1 endpoints first,
 * publishes one key per peer ("ibmsg.ep.<peer rank>": the blob of its endpoint to that peer, so
 * a Get fetches only the 64 bytes meant for the caller, not the publisher's whole table),
 * fences once with data collection, connects, and fences again so nobody sends to a queue pair
 * that is not ready to receive. docs/scaling.md has the costs of both.
 *
 * Under PMIx the world also registers for the launcher's process-termination events: a rank
 * reported gone has its endpoint failed (requests complete with IBMSG_ERR_PEER_FAILED).
 */
#include <ibmsg/world.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world/bootstrap_pmix.h"
#include "core/core.h"
#include "world/wireup.h"
#include "world/world_counters.h"
#include "world/world_events.h"
#include "util/log.h"

#define WORLD_KEY_FMT    "ibmsg.ep.%u"
#define WORLD_UD_KEY     "ibmsg.ud"
#define WORLD_TIMEOUT_MS 60000 /* TCP bootstrap: accept, exchange and barrier */
#define WORLD_FENCE_S    300   /* asked of the PMIx server; launchers may ignore it */

struct ibmsg_world_s {
    ibmsg_context_t ctx;
    uint32_t rank;
    uint32_t size;
    uint32_t local_rank;
    ibmsg_world_bootstrap_t how;
    ibmsg_oob_t oob;    /* TCP: the connection to the peer */
    ibmsg_ep_t *eps;    /* size entries; eps[rank] is NULL, and those not wired up yet */
    world_wireup_t *wu; /* PMIx: connection manager (on demand) and dead-peer events */
    int on_demand;
};

/* One world per process: PMIx state and the counters are process-wide. */
static ibmsg_world_t world_current;

/* A barrier's wait: progress, then wait as core_wait_mode says (the fence's callback wakes). */
typedef struct world_waiting {
    ibmsg_context_t ctx;
    core_waiter_t w;
} world_waiting_t;

static void world_progress(void *arg)
{
    world_waiting_t *ww = arg;

    core_progress(ww->ctx, NULL);
    core_wait_block(ww->ctx, &ww->w, NULL);
}

static void world_wake(void *ctx)
{
    core_context_wake(ctx);
}

static int world_fence(ibmsg_world_t w, int collect)
{
    uint64_t t0 = world_now_ns();
    int status = IBMSG_OK;

    core_flush_held(w->ctx); /* messages started before a barrier leave before it */
    if (w->how == IBMSG_WORLD_PMIX && !collect && w->wu != NULL) {
        world_waiting_t ww = {.ctx = w->ctx};
        status = world_pmix_fence_progress(WORLD_FENCE_S, world_progress, &ww, world_wake, w->ctx);
    } else if (w->how == IBMSG_WORLD_PMIX) {
        status = world_pmix_fence(collect, WORLD_FENCE_S);
    } else if (w->how == IBMSG_WORLD_TCP) {
        unsigned char token = 0xb5;
        size_t len = sizeof(token);

        status = ibmsg_oob_send(w->oob, &token, len, WORLD_TIMEOUT_MS);
        if (status == IBMSG_OK) {
            status = ibmsg_oob_recv(w->oob, &token, &len, WORLD_TIMEOUT_MS);
        }
        if (status == IBMSG_OK && (len != 1 || token != 0xb5)) {
            status = IBMSG_ERR_PROTOCOL;
        }
    }
    if (status == IBMSG_OK) {
        world_cnt.fence_ns += world_now_ns() - t0;
        world_cnt.fences++;
        if (collect) {
            world_cnt.init_fence_ns = world_now_ns() - t0; /* only init collects */
        }
    }
    return status;
}

/* IBMSG_WORLD_PEER=host:port and IBMSG_WORLD_RANK=0|1. */
static int world_tcp_env(char *host, size_t host_len, uint16_t *port, uint32_t *rank)
{
    const char *peer = getenv("IBMSG_WORLD_PEER");
    const char *rank_s = getenv("IBMSG_WORLD_RANK");
    const char *colon;
    char *end;
    unsigned long v;

    if (peer == NULL) {
        return IBMSG_ERR_NOT_FOUND;
    }
    colon = strrchr(peer, ':');
    if (colon == NULL || colon == peer || (size_t)(colon - peer) >= host_len) {
        util_error("world: IBMSG_WORLD_PEER='%s' is not host:port", peer);
        return IBMSG_ERR_INVALID;
    }
    errno = 0;
    v = strtoul(colon + 1, &end, 10);
    if (errno != 0 || *end != '\0' || end == colon + 1 || v == 0 || v > 65535) {
        util_error("world: IBMSG_WORLD_PEER='%s': bad port", peer);
        return IBMSG_ERR_INVALID;
    }
    *port = (uint16_t)v;
    memcpy(host, peer, (size_t)(colon - peer));
    host[colon - peer] = '\0';
    if (rank_s == NULL || (strcmp(rank_s, "0") != 0 && strcmp(rank_s, "1") != 0)) {
        util_error("world: IBMSG_WORLD_PEER is set: IBMSG_WORLD_RANK must be 0 or 1");
        return IBMSG_ERR_INVALID;
    }
    *rank = rank_s[0] == '1';
    return IBMSG_OK;
}

static int world_eps_create(ibmsg_world_t w)
{
    for (uint32_t p = 0; p < w->size; p++) {
        int status;

        if (p == w->rank) {
            continue;
        }
        status = ibmsg_ep_create(w->ctx, &w->eps[p]);
        if (status != IBMSG_OK) {
            util_error("world: endpoint to rank %u of %u: %s", p, w->size,
                       ibmsg_status_string(status));
            return status;
        }
        w->eps[p]->world_rank = p;
        world_cnt.eps++;
    }
    return IBMSG_OK;
}

static int world_wireup_pmix(ibmsg_world_t w)
{
    unsigned char blob[IBMSG_EP_ADDRESS_MAX];
    char key[32];
    size_t len;
    int status;

    for (uint32_t p = 0; p < w->size; p++) {
        if (p == w->rank) {
            continue;
        }
        len = sizeof(blob);
        status = ibmsg_ep_address(w->eps[p], blob, &len);
        if (status != IBMSG_OK) {
            return status;
        }
        snprintf(key, sizeof(key), WORLD_KEY_FMT, p);
        status = world_pmix_put(key, blob, len);
        if (status != IBMSG_OK) {
            return status;
        }
    }
    status = world_fence(w, 1);
    if (status != IBMSG_OK) {
        return status;
    }
    snprintf(key, sizeof(key), WORLD_KEY_FMT, w->rank);
    for (uint32_t p = 0; p < w->size; p++) {
        if (p == w->rank) {
            continue;
        }
        len = sizeof(blob);
        status = world_pmix_get(p, key, blob, &len);
        if (status == IBMSG_OK) {
            /* The blob is untrusted: ibmsg_ep_connect validates it. */
            status = ibmsg_ep_connect(w->eps[p], blob, len);
        }
        if (status != IBMSG_OK) {
            util_error("world: connecting to rank %u: %s", p, ibmsg_status_string(status));
            return status;
        }
    }
    /* Every queue pair is ready to receive before anyone sends. */
    return world_fence(w, 0);
}

static int world_ud_lookup(uint32_t rank, void *buf, size_t *len)
{
    return world_pmix_get(rank, WORLD_UD_KEY, buf, len);
}

static void world_peer_died(uint32_t rank, void *wu)
{
    world_wireup_peer_died(wu, rank);
}

/* On demand: publish the connection manager's address; endpoints come later (wireup.c). */
static int world_wireup_on_demand(ibmsg_world_t w)
{
    unsigned char blob[64];
    size_t len = sizeof(blob);
    int status = world_wireup_address(w->wu, blob, &len);

    if (status == IBMSG_OK) {
        status = world_pmix_put(WORLD_UD_KEY, blob, len);
    }
    if (status == IBMSG_OK) {
        status = world_fence(w, 1);
    }
    return status;
}

static int world_bootstrap_tcp(ibmsg_world_t w, const char *host, uint16_t port)
{
    int status;

    if (w->rank == 0) {
        ibmsg_oob_t listener;

        status = ibmsg_oob_listen(NULL, port, &listener);
        if (status != IBMSG_OK) {
            return status;
        }
        status = ibmsg_oob_accept(listener, WORLD_TIMEOUT_MS, &w->oob);
        ibmsg_oob_close(listener);
    } else {
        status = ibmsg_oob_connect(host, port, WORLD_TIMEOUT_MS, &w->oob);
    }
    return status;
}

static void world_free(ibmsg_world_t w)
{
    for (uint32_t p = 0; w->eps != NULL && p < w->size; p++) {
        world_cnt.eps -= w->eps[p] != NULL;
    }
    if (w->how == IBMSG_WORLD_PMIX) {
        world_pmix_finalize(); /* first: its event handler may still name the wireup */
    }
    world_wireup_destroy(w->wu);
    if (w->ctx != IBMSG_CONTEXT_NULL) {
        ibmsg_context_destroy(w->ctx); /* destroys the endpoints too */
    }
    if (w->oob != NULL) {
        ibmsg_oob_close(w->oob);
    }
    free(w->eps);
    free(w);
}

int ibmsg_world_init(ibmsg_info_t info, ibmsg_world_t *world)
{
    char host[256];
    uint16_t port = 0;
    uint64_t t0 = world_now_ns();
    ibmsg_world_t w;
    int status;

    if (world == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (world_current != NULL) {
        return IBMSG_ERR_BUSY;
    }
    world_counters_init();
    world_events_register();
    world_cnt.init_fence_ns = 0;
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    w->size = 1;
    if (world_pmix_launched()) {
        status = world_pmix_init(&w->rank, &w->size, &w->local_rank);
        if (status != IBMSG_OK) {
            free(w);
            return status;
        }
        w->how = IBMSG_WORLD_PMIX;
    } else {
        status = world_tcp_env(host, sizeof(host), &port, &w->rank);
        if (status == IBMSG_OK) {
            w->how = IBMSG_WORLD_TCP;
            w->size = 2;
        } else if (status != IBMSG_ERR_NOT_FOUND) {
            free(w);
            return status;
        }
    }
    status = ibmsg_context_create(info, &w->ctx);
    if (status == IBMSG_OK && w->how == IBMSG_WORLD_TCP) {
        status = world_bootstrap_tcp(w, host, port);
    }
    if (status == IBMSG_OK) {
        w->eps = calloc(w->size, sizeof(*w->eps));
        status = w->eps == NULL ? IBMSG_ERR_NO_MEMORY : IBMSG_OK;
    }
    /* Two processes over TCP have no PMIx to publish a UD address through: always eager. */
    w->on_demand = status == IBMSG_OK && w->how == IBMSG_WORLD_PMIX && w->ctx->cfg.world_wireup;
    if (status == IBMSG_OK && w->how == IBMSG_WORLD_PMIX) {
        status = world_wireup_create(w->ctx, w->rank, w->size, w->eps, w->on_demand,
                                     world_ud_lookup, &w->wu);
        if (status == IBMSG_OK && world_pmix_on_death(world_peer_died, w->wu) != IBMSG_OK) {
            util_warn("world: no process-termination events from the launcher: a dead peer is "
                      "seen only when the transport gives up");
        }
    }
    if (status == IBMSG_OK && w->size > 1 && !w->on_demand) {
        status = world_eps_create(w);
    }
    if (status == IBMSG_OK && w->on_demand) {
        status = world_wireup_on_demand(w);
    } else if (status == IBMSG_OK && w->how == IBMSG_WORLD_PMIX) {
        status = world_wireup_pmix(w);
    } else if (status == IBMSG_OK && w->how == IBMSG_WORLD_TCP) {
        status = ibmsg_oob_ep_connect(w->oob, w->eps[1 - w->rank], WORLD_TIMEOUT_MS);
    }
    if (status != IBMSG_OK) {
        world_free(w);
        return status;
    }
    world_cnt.bootstrap_ns = world_now_ns() - t0;
    util_debug("world: rank %u of %u (local rank %u) up in %llu us", w->rank, w->size,
               w->local_rank, (unsigned long long)((world_now_ns() - t0) / 1000));
    world_current = w;
    *world = w;
    return IBMSG_OK;
}

int ibmsg_world_finalize(ibmsg_world_t world)
{
    if (world == NULL || world != world_current) {
        return IBMSG_ERR_INVALID;
    }
    world_current = NULL;
    world_free(world);
    return IBMSG_OK;
}

int ibmsg_world_rank(ibmsg_world_t world, uint32_t *rank)
{
    if (world == NULL || rank == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *rank = world->rank;
    return IBMSG_OK;
}

int ibmsg_world_size(ibmsg_world_t world, uint32_t *size)
{
    if (world == NULL || size == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *size = world->size;
    return IBMSG_OK;
}

int ibmsg_world_local_rank(ibmsg_world_t world, uint32_t *local_rank)
{
    if (world == NULL || local_rank == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *local_rank = world->local_rank;
    return IBMSG_OK;
}

int ibmsg_world_bootstrap(ibmsg_world_t world, ibmsg_world_bootstrap_t *how)
{
    if (world == NULL || how == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *how = world->how;
    return IBMSG_OK;
}

int ibmsg_world_context(ibmsg_world_t world, ibmsg_context_t *ctx)
{
    if (world == NULL || ctx == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *ctx = world->ctx;
    return IBMSG_OK;
}

int ibmsg_world_ep(ibmsg_world_t world, uint32_t rank, ibmsg_ep_t *ep)
{
    if (world == NULL || ep == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (rank >= world->size) {
        return IBMSG_ERR_OUT_OF_RANGE;
    }
    if (rank == world->rank) {
        return IBMSG_ERR_INVALID;
    }
    if (world->eps[rank] == NULL && world->on_demand) {
        return world_wireup_ep(world->wu, rank, ep);
    }
    *ep = world->eps[rank];
    return IBMSG_OK;
}

int ibmsg_world_ep_rank(ibmsg_world_t world, ibmsg_ep_t ep, uint32_t *rank)
{
    if (world == NULL || ep == NULL || rank == NULL) {
        return IBMSG_ERR_INVALID;
    }
    /* world_rank is only trusted when the world's table points back at ep. */
    if (world->eps == NULL || ep->world_rank >= world->size || world->eps[ep->world_rank] != ep) {
        return IBMSG_ERR_NOT_FOUND;
    }
    *rank = ep->world_rank;
    return IBMSG_OK;
}

int ibmsg_world_barrier(ibmsg_world_t world)
{
    if (world == NULL) {
        return IBMSG_ERR_INVALID;
    }
    return world_fence(world, 0);
}
