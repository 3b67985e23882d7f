/*
 * ring: every rank passes a token to the next rank around the ring, n times, and checks what
 * comes back. The job is set up by ibmsg_world_init: under mpirun / srun through PMIx, as two
 * processes through IBMSG_WORLD_PEER / IBMSG_WORLD_RANK, or alone.
 *
 *   mpirun -np 4 ./ring [-n laps] [-s bytes]
 *
 * Device, port and GID come from IBMSG_DEVICE, IBMSG_PORT and IBMSG_GID_INDEX (or defaults).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ibmsg/ibmsg.h>
#include <ibmsg/world.h>

#define TAG 0x52494e47u

static uint32_t rank;

static void check(const char *what, int status)
{
    if (status != IBMSG_OK) {
        fprintf(stderr, "ring: rank %u: %s: %s\n", rank, what, ibmsg_status_string(status));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long laps = 100;
    size_t size = 64;
    uint32_t nranks;
    ibmsg_world_t world;
    ibmsg_context_t ctx;
    ibmsg_ep_t next, prev;
    unsigned char *buf;
    struct timespec t0, t1;
    int opt;

    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        switch (opt) {
        case 'n':
            laps = strtol(optarg, NULL, 0);
            break;
        case 's':
            size = strtoul(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: %s [-n laps] [-s bytes]\n", argv[0]);
            return 2;
        }
    }
    if (laps <= 0 || size < sizeof(uint64_t)) {
        fprintf(stderr, "ring: need laps > 0 and bytes >= 8\n");
        return 2;
    }
    check("world_init", ibmsg_world_init(IBMSG_INFO_NULL, &world));
    check("world_rank", ibmsg_world_rank(world, &rank));
    check("world_size", ibmsg_world_size(world, &nranks));
    if (nranks < 2) {
        printf("ring: one process, nothing to pass around (launch with mpirun -np N)\n");
        check("world_finalize", ibmsg_world_finalize(world));
        return 0;
    }
    check("world_context", ibmsg_world_context(world, &ctx));
    check("world_ep next", ibmsg_world_ep(world, (rank + 1) % nranks, &next));
    check("world_ep prev", ibmsg_world_ep(world, (rank + nranks - 1) % nranks, &prev));
    buf = calloc(1, size);
    if (buf == NULL) {
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long lap = 0; lap < laps; lap++) {
        uint64_t token;
        ibmsg_tag_status_t st;

        if (rank == 0) {
            token = (uint64_t)lap * nranks;
            memcpy(buf, &token, sizeof(token));
            check("send", ibmsg_tag_send(next, buf, size, TAG));
        }
        check("recv", ibmsg_tag_recv(ctx, prev, buf, size, TAG, IBMSG_TAG_MASK_EXACT, &st));
        memcpy(&token, buf, sizeof(token));
        /* Every rank adds one on the way: rank r sees lap * size + r (rank 0: a full lap). */
        if (st.length != size ||
            token != (uint64_t)lap * nranks + (rank == 0 ? nranks - 1 : rank - 1)) {
            fprintf(stderr, "ring: rank %u: lap %ld: token %llu, length %zu\n", rank, lap,
                    (unsigned long long)token, st.length);
            return 1;
        }
        if (rank != 0) {
            token++;
            memcpy(buf, &token, sizeof(token));
            check("send", ibmsg_tag_send(next, buf, size, TAG));
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    check("barrier", ibmsg_world_barrier(world));
    if (rank == 0) {
        double us =
            ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3);
        printf("ring: %u ranks, %ld laps of %zu B: %.1f us per hop\n", nranks, laps, size,
               us / (double)laps / nranks);
    }
    free(buf);
    check("world_finalize", ibmsg_world_finalize(world));
    return 0;
}
