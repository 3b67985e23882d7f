/*
 * The world (include/ibmsg/world.h): bootstrap from the environment, then eager wireup.
 *
 * Why eager: an endpoint is a reliable-connected queue pair, and its address blob (QPN, GID,
 * ...) exists only once that queue pair exists, per peer. On-demand wireup needs the peer to
 * create its side when asked, which needs a path to ask it through that exists before any
 * endpoint: PMIx keys are read-only after the fence (a Get cannot notify the owner) and the core
 * has no connection-less (UD) channel yet. So every process creates its size-1 endpoints first,
 * publishes one key per peer ("ibmsg.ep.<peer rank>": the blob of its endpoint to that peer, so
 * a Get fetches only the 64 bytes meant for the caller, not the publisher's whole table),
 * fences once with data collection, connects, and fences again so nobody sends to a queue pair
 * that is not ready to receive. docs/scaling.md has the costs and the on-demand design.
 */
#include <ibmsg/world.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bootstrap_pmix.h"
#include "core/core.h"
#include "core/world_counters.h"
#include "util/log.h"

#define WORLD_KEY_FMT    "ibmsg.ep.%u"
#define WORLD_TIMEOUT_MS 60000 /* TCP bootstrap: accept, exchange and barrier */
#define WORLD_FENCE_S    300   /* asked of the PMIx server; launchers may ignore it */

struct ibmsg_world_s {
    ibmsg_context_t ctx;
    uint32_t rank;
    uint32_t size;
    uint32_t local_rank;
    ibmsg_world_bootstrap_t how;
    ibmsg_oob_t oob; /* TCP: the connection to the peer */
    ibmsg_ep_t *eps; /* size entries; eps[rank] is NULL */
};

/* One world per process: PMIx state and the counters are process-wide. */
static ibmsg_world_t world_current;

static int world_fence(ibmsg_world_t w, int collect)
{
    uint64_t t0 = core_world_now_ns();
    int status = IBMSG_OK;

    if (w->how == IBMSG_WORLD_PMIX) {
        status = core_pmix_fence(collect, WORLD_FENCE_S);
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
        core_world_cnt.fence_ns += core_world_now_ns() - t0;
        core_world_cnt.fences++;
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
    w->eps = calloc(w->size, sizeof(*w->eps));
    if (w->eps == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
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
        core_world_cnt.eps++;
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
        status = core_pmix_put(key, blob, len);
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
        status = core_pmix_get(p, key, blob, &len);
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
        core_world_cnt.eps -= w->eps[p] != NULL;
    }
    if (w->ctx != IBMSG_CONTEXT_NULL) {
        ibmsg_context_destroy(w->ctx); /* destroys the endpoints too */
    }
    if (w->oob != NULL) {
        ibmsg_oob_close(w->oob);
    }
    if (w->how == IBMSG_WORLD_PMIX) {
        core_pmix_finalize();
    }
    free(w->eps);
    free(w);
}

int ibmsg_world_init(ibmsg_info_t info, ibmsg_world_t *world)
{
    char host[256];
    uint16_t port = 0;
    uint64_t t0 = core_world_now_ns();
    ibmsg_world_t w;
    int status;

    if (world == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (world_current != NULL) {
        return IBMSG_ERR_BUSY;
    }
    core_world_counters_init();
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    w->size = 1;
    if (core_pmix_launched()) {
        status = core_pmix_init(&w->rank, &w->size, &w->local_rank);
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
    if (status == IBMSG_OK && w->size > 1) {
        status = world_eps_create(w);
    }
    if (status == IBMSG_OK && w->how == IBMSG_WORLD_PMIX) {
        status = world_wireup_pmix(w);
    } else if (status == IBMSG_OK && w->how == IBMSG_WORLD_TCP) {
        status = ibmsg_oob_ep_connect(w->oob, w->eps[1 - w->rank], WORLD_TIMEOUT_MS);
    }
    if (status != IBMSG_OK) {
        world_free(w);
        return status;
    }
    core_world_cnt.bootstrap_ns = core_world_now_ns() - t0;
    util_debug("world: rank %u of %u (local rank %u) up in %llu us", w->rank, w->size,
               w->local_rank, (unsigned long long)((core_world_now_ns() - t0) / 1000));
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
