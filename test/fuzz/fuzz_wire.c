/*
 * libFuzzer harness: the receive side of the wire protocol. The input is a stream of arrivals
 * (and receives posted between them) fed to core_wire_validate and then handled the way
 * progress.c handles an accepted header: sequence and credit accounting, tag matching against
 * posted receives (core/match.c), a bounded copy into the matched receive, or the unexpected
 * queue. Any header type a later protocol adds is covered through core_wire_validate.
 *
 * Input: 4 bytes of set-up (eager limit, credits outstanding), then records:
 *   op (1 byte): bit 0 post a receive first, bit 1 fix up the header's sequence number,
 *   bit 2 fix up its length, bit 3 a compact message (the first 4 of the L bytes are its
 *   immediate, the rest its payload); 2 bytes record length L; L bytes arrived (header +
 *   payload); when posting, 9 more bytes: tag (4), mask selector (1), receive length (4,
 *   reduced).
 * Invariants checked (abort on violation): an accepted header has a known type, zero reserved
 * fields, the expected sequence number, a length equal to what arrived (and, for eager data,
 * within the eager limit; an RTS/FIN body is accepted whatever the limit) and no more credits
 * than outstanding; an accepted compact message has the format bit, 1..limit payload bytes, a
 * tag within CORE_WIRE_IMM_TAG_MAX and no more credits than outstanding; a delivery never
 * writes past its receive buffer (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/credit.h"
#include "core/match.h"
#include "core/wire.h"
#include <ibmsg/tool.h>

#include "counters/shards/shard.h"

#define FUZZ_MAX_MSG   (sizeof(core_wire_hdr_t) + 16384)
#define FUZZ_MAX_QUEUE 64

typedef struct fuzz_recv {
    core_mq_entry_t mq;
    uint8_t *buf;
    uint32_t len;
    int used;
} fuzz_recv_t;

typedef struct fuzz_unexp {
    core_mq_entry_t mq;
    uint32_t length;
    int used;
} fuzz_unexp_t;

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

#define CHECK(c)     \
    do {             \
        if (!(c)) {  \
            abort(); \
        }            \
    } while (0)

/* An accepted eager message or RTS: into a matching receive (a bounded copy) or unexpected. */
static void fuzz_arrive(core_mq_t *mq, fuzz_unexp_t *unexp, uint8_t *ep_id, uint64_t tag,
                        const uint8_t *payload, uint32_t length)
{
    core_mq_entry_t *e = core_mq_match_arrival(mq, ep_id, tag);

    if (e != NULL) {
        fuzz_recv_t *r = (fuzz_recv_t *)e;
        uint32_t n = length <= r->len ? length : r->len;
        CHECK(r->used);
        memcpy(r->buf, payload, n); /* never past the receive buffer */
        free(r->buf);
        r->used = 0;
        return;
    }
    for (int i = 0; i < FUZZ_MAX_QUEUE; i++) {
        if (!unexp[i].used) {
            unexp[i].used = 1;
            unexp[i].length = length;
            unexp[i].mq.ep = ep_id;
            unexp[i].mq.tag = tag;
            core_mq_push_unexpected(mq, &unexp[i].mq);
            return;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cnt_shard_t *cnt;
    static uint8_t ep_id; /* the one peer endpoint's identity */
    static _Alignas(8) uint8_t msg[FUZZ_MAX_MSG];
    fuzz_recv_t recvs[FUZZ_MAX_QUEUE];
    fuzz_unexp_t unexp[FUZZ_MAX_QUEUE];
    core_credit_t cr;
    core_mq_t mq;
    uint32_t limit, rx_seq = 0;
    size_t pos = 4;

    if (cnt == NULL && cnt_block_create(IBMSG_T_BIND_CONTEXT, &ep_id, &cnt) != 0) {
        abort();
    }
    if (size < 4) {
        return 0;
    }
    memset(recvs, 0, sizeof(recvs));
    memset(unexp, 0, sizeof(unexp));
    core_mq_init(&mq, cnt);
    limit = ((uint32_t)data[0] | ((uint32_t)data[1] << 8)) % 16385;
    core_credit_init(&cr, 64, 64);
    cr.sent = data[2]; /* messages this side has sent: what the peer may return */
    cr.returned = data[3] <= data[2] ? data[3] : 0;

    while (pos + 3 <= size) {
        uint8_t op = data[pos];
        uint32_t len = ((uint32_t)data[pos + 1] | ((uint32_t)data[pos + 2] << 8)) % FUZZ_MAX_MSG;
        core_wire_hdr_t *hdr = (core_wire_hdr_t *)msg;
        core_wire_check_t check;
        uint64_t unreturned;
        core_mq_entry_t *e;

        pos += 3;
        if (op & 1) {
            if (pos + 9 > size) {
                break;
            }
            /* Post a receive: match it against the unexpected queue first, as tag.c does. */
            uint64_t tag = get32(data + pos);
            uint64_t mask = (data[pos + 4] & 1) ? UINT64_MAX : 0;
            uint32_t rlen = get32(data + pos + 5) % 20000;
            pos += 9;
            e = core_mq_match_posted(&mq, &ep_id, tag, mask);
            if (e != NULL) {
                fuzz_unexp_t *u = (fuzz_unexp_t *)e;
                uint8_t *buf = malloc(rlen + 1);
                CHECK(buf != NULL && u->used);
                memset(buf, 0, u->length < rlen ? u->length : rlen);
                free(buf);
                u->used = 0;
            } else {
                for (int i = 0; i < FUZZ_MAX_QUEUE; i++) {
                    if (!recvs[i].used) {
                        recvs[i].used = 1;
                        recvs[i].len = rlen;
                        recvs[i].buf = malloc(rlen > 0 ? rlen : 1);
                        CHECK(recvs[i].buf != NULL);
                        recvs[i].mq.ep = &ep_id;
                        recvs[i].mq.tag = tag;
                        recvs[i].mq.mask = mask;
                        core_mq_push_posted(&mq, &recvs[i].mq);
                        break;
                    }
                }
            }
        }
        if (len > size - pos) {
            len = (uint32_t)(size - pos);
        }
        memset(msg, 0, sizeof(core_wire_hdr_t));
        memcpy(msg, data + pos, len);
        pos += len;
        if (op & 8) {
            uint32_t imm = len >= 4 ? get32(msg) : 0, plen = len >= 4 ? len - 4 : 0;
            uint16_t credits = core_wire_imm_credits(imm);
            unreturned = core_credit_unreturned(&cr);
            check = core_wire_validate_imm(imm, plen, unreturned, limit);
            CHECK((unsigned)check < CORE_WIRE_CHECK_LAST);
            if (check != CORE_WIRE_OK) {
                continue;
            }
            CHECK(imm & CORE_WIRE_IMM_COMPACT);
            CHECK(plen > 0 && plen <= limit);
            CHECK(credits <= unreturned && credits <= CORE_WIRE_IMM_CREDITS_MAX);
            CHECK(core_wire_imm_tag(imm) <= CORE_WIRE_IMM_TAG_MAX);
            CHECK(core_wire_imm_make(core_wire_imm_tag(imm), credits) == imm);
            rx_seq++; /* takes the next sequence number */
            if (credits != 0) {
                core_credit_grant(&cr, credits);
            }
            CHECK(cr.returned <= cr.sent);
            fuzz_arrive(&mq, unexp, &ep_id, core_wire_imm_tag(imm), msg + 4, plen);
            continue;
        }
        if ((op & 2) && len >= sizeof(*hdr)) {
            hdr->seq = rx_seq;
        }
        if ((op & 4) && len >= sizeof(*hdr)) {
            hdr->length = len - (uint32_t)sizeof(*hdr);
        }
        unreturned = core_credit_unreturned(&cr);
        check = core_wire_validate(hdr, len, rx_seq, unreturned, limit);
        CHECK((unsigned)check < CORE_WIRE_CHECK_LAST);
        CHECK(core_wire_check_string(check) != NULL);
        if (check != CORE_WIRE_OK) {
            continue;
        }
        /* Accepted: what progress.c relies on. */
        CHECK(len >= sizeof(*hdr));
        CHECK(hdr->seq == rx_seq);
        CHECK(hdr->length == len - sizeof(*hdr));
        CHECK(hdr->type != CORE_WIRE_EAGER || hdr->length <= limit); /* the limit is eager's */
        CHECK(hdr->reserved == 0);
        CHECK(hdr->flags == 0 ||
              (hdr->type == CORE_WIRE_RTS && hdr->flags == CORE_WIRE_FLAG_WINDOW) ||
              (hdr->type == CORE_WIRE_FIN && hdr->flags == CORE_WIRE_FLAG_INVALIDATED));
        CHECK(hdr->credits <= unreturned);
        rx_seq++;
        if (hdr->credits != 0) {
            core_credit_grant(&cr, hdr->credits);
        }
        CHECK(cr.returned <= cr.sent);
        if (hdr->type == CORE_WIRE_CREDIT) {
            CHECK(hdr->tag == 0 && hdr->length == 0);
            continue;
        }
        if (hdr->type == CORE_WIRE_FIN) {
            CHECK(hdr->tag == 0 && hdr->length == sizeof(core_wire_rndv_t));
            continue; /* matched against outstanding transfers (core/rndv.c), not receives */
        }
        fuzz_arrive(&mq, unexp, &ep_id, hdr->tag, (const uint8_t *)(hdr + 1), hdr->length);
    }
    /* Drain both queues so the next input starts clean (the shard's levels return to 0). */
    for (int i = 0; i < FUZZ_MAX_QUEUE; i++) {
        if (recvs[i].used) {
            core_mq_remove_posted(&mq, &recvs[i].mq);
            free(recvs[i].buf);
        }
        if (unexp[i].used) {
            core_mq_remove_unexpected(&mq, &unexp[i].mq);
        }
    }
    CHECK(core_mq_list_empty(&mq.posted) && core_mq_list_empty(&mq.unexpected));
    return 0;
}
