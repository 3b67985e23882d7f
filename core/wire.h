/*
 * The wire header that starts every message between two endpoints, and its validation. Every
 * field of a header from the wire is checked here before anything else looks at it.
 *
 * Layout (host byte order: both ends of a connection are little-endian x86-64 / aarch64 hosts;
 * the address blob's version byte guards against mixing incompatible peers):
 *   type    CORE_WIRE_EAGER: tagged data follows; CORE_WIRE_CREDIT: credit return only;
 *           CORE_WIRE_RTS: a rendezvous request-to-send (tagged), CORE_WIRE_FIN: the end of a
 *           rendezvous pull (no tag); both followed by a core_wire_rndv_t (core/rndv.h).
 *   flags   CORE_WIRE_FLAG_WINDOW on an RTS whose key is a memory window (the FIN invalidates
 *           it); CORE_WIRE_FLAG_INVALIDATED on a FIN sent with invalidate of that key (a
 *           SEND_WITH_INV: the sender need not, and must not, invalidate it again, and need not
 *           trust its device to report the invalidation: bnxt_re does not set IBV_WC_WITH_INV);
 *           every other bit, and every bit on other types, is reserved (0)
 *   credits receive buffers the sender has reposted since its last return (piggy-backed)
 *   seq     per-connection message number, every message counts; RC delivers in order, so a
 *           gap or repeat is corruption
 *   tag     the message tag (0 for CREDIT)
 *   length  payload bytes after the header (0 for CREDIT)
 *
 * Compact eager messages carry no header in the payload: the header is the 32-bit immediate of
 * a SEND_WITH_IMM, so the wire holds exactly the user's bytes (a 4 KiB message is one packet
 * at IB MTU 4096, not two). The immediate (CORE_WIRE_IMM_*):
 *   bit 31      format, 1 (a 0 is reserved for other immediate formats: rejected)
 *   bits 23..30 credits, as in the header (at most CORE_WIRE_IMM_CREDITS_MAX per message)
 *   bits 0..22  the tag (tags above CORE_WIRE_IMM_TAG_MAX take the full header)
 * The sequence number is not carried: a compact message takes the next one, as RC delivers in
 * order. The length is the completion's byte count. Empty messages keep the full header.
 *
 * A receive buffer is the eager limit long (core_wire_buf_size): a compact message carries up
 * to the limit, one with the header up to the limit less the header (core_wire_eager_max).
 */
#ifndef IBMSG_CORE_WIRE_H
#define IBMSG_CORE_WIRE_H

#include <stdint.h>

#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CORE_WIRE_EAGER = 1,
    CORE_WIRE_CREDIT = 2,
    CORE_WIRE_RTS = 3,
    CORE_WIRE_FIN = 4,
};

enum {
    CORE_WIRE_FLAG_WINDOW = 1u << 0,      /* RTS only */
    CORE_WIRE_FLAG_INVALIDATED = 1u << 1, /* FIN only */
};

/* The flags a header of type may carry. */
static inline uint8_t core_wire_flags_allowed(uint8_t type)
{
    return type == CORE_WIRE_RTS   ? (uint8_t)CORE_WIRE_FLAG_WINDOW
           : type == CORE_WIRE_FIN ? (uint8_t)CORE_WIRE_FLAG_INVALIDATED
                                   : 0;
}

#define CORE_WIRE_IMM_COMPACT       (1u << 31)
#define CORE_WIRE_IMM_CREDITS_SHIFT 23
#define CORE_WIRE_IMM_CREDITS_MAX   0xffu
#define CORE_WIRE_IMM_TAG_MAX       ((1u << CORE_WIRE_IMM_CREDITS_SHIFT) - 1)

/** The immediate of a compact eager message (tag <= CORE_WIRE_IMM_TAG_MAX, credits <= MAX). */
static inline uint32_t core_wire_imm_make(uint64_t tag, uint32_t credits)
{
    return CORE_WIRE_IMM_COMPACT | (credits << CORE_WIRE_IMM_CREDITS_SHIFT) | (uint32_t)tag;
}

static inline uint64_t core_wire_imm_tag(uint32_t imm)
{
    return imm & CORE_WIRE_IMM_TAG_MAX;
}

static inline uint16_t core_wire_imm_credits(uint32_t imm)
{
    return (uint16_t)((imm >> CORE_WIRE_IMM_CREDITS_SHIFT) & CORE_WIRE_IMM_CREDITS_MAX);
}

typedef struct core_wire_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t credits;
    uint32_t seq;
    uint64_t tag;
    uint32_t length;
    uint32_t reserved;
} core_wire_hdr_t;

/*
 * The body of a rendezvous message, after the header (hdr.length = its size).
 *   RTS: the sender's registered buffer (addr, length: the whole message, rkey) and the transfer
 *        id, which counts the endpoint's rendezvous sends from 0 (the receiver expects them in
 *        order, RC delivers in order).
 *   FIN: the same addr, rkey and id back, length = bytes the receiver pulled (<= the message).
 * Stateless checks here (a non-empty RTS, no zero address, no wrap-around); whether the id,
 * address, length and key belong to an outstanding transfer is checked in core/rndv.c.
 */
typedef struct core_wire_rndv {
    uint64_t addr;
    uint64_t length;
    uint32_t rkey;
    uint32_t id;
} core_wire_rndv_t;

/**
 * The size of a receive (and send bounce) buffer for an eager limit: the limit itself, as a
 * compact message is its payload alone, but never less than a header with a rendezvous body.
 * A page-multiple limit thus keeps the buffers of a page-aligned pool on page boundaries, and
 * a message of a page touches one page of its buffer, not two: one address translation for the
 * device instead of two. (On rxe under emulation the bandwidth difference at 4 KiB was within
 * the noise, 1.00 in 12 alternating runs.)
 */
static inline uint32_t core_wire_buf_size(uint32_t eager_limit)
{
    uint32_t least = (uint32_t)(sizeof(core_wire_hdr_t) + sizeof(core_wire_rndv_t));

    return eager_limit > least ? eager_limit : least;
}

/**
 * The largest payload sent eagerly with tag under the agreed eager limit: the limit when the
 * message can go compact (tag <= CORE_WIRE_IMM_TAG_MAX), else what the buffer leaves beside
 * the header (the limit less the header's bytes). Both ends compute it from the same limit:
 * the receiver rejects an RTS for a message this says goes eagerly.
 */
static inline uint32_t core_wire_eager_max(uint32_t limit, uint64_t tag)
{
    uint32_t room = core_wire_buf_size(limit) - (uint32_t)sizeof(core_wire_hdr_t);

    return tag <= CORE_WIRE_IMM_TAG_MAX || room > limit ? limit : room;
}

/* Why a header was rejected. */
typedef enum core_wire_check {
    CORE_WIRE_OK = 0,
    CORE_WIRE_SHORT,       /* fewer bytes than a header */
    CORE_WIRE_BAD_TYPE,    /* unknown type */
    CORE_WIRE_BAD_FLAGS,   /* reserved bits set */
    CORE_WIRE_BAD_SEQ,     /* not the next sequence number */
    CORE_WIRE_BAD_LENGTH,  /* length above the limit or not what arrived */
    CORE_WIRE_BAD_TAG,     /* a tag on a message type that has none */
    CORE_WIRE_BAD_CREDITS, /* more credits returned than messages sent */
    CORE_WIRE_BAD_RNDV,    /* rendezvous body: empty RTS, zero address or address range wraps */
    CORE_WIRE_CHECK_LAST,
} core_wire_check_t;

/**
 * Check a header that arrived in byte_len bytes: expected_seq is the next sequence number,
 * unreturned the credits the peer may still return (messages sent minus credits returned),
 * max_length the largest payload this side accepts.
 */
static inline core_wire_check_t core_wire_validate(const core_wire_hdr_t *hdr, uint32_t byte_len,
                                                   uint32_t expected_seq, uint64_t unreturned,
                                                   uint32_t max_length)
{
    if (util_unlikely(byte_len < sizeof(*hdr))) {
        return CORE_WIRE_SHORT;
    }
    if (util_unlikely(hdr->type < CORE_WIRE_EAGER || hdr->type > CORE_WIRE_FIN)) {
        return CORE_WIRE_BAD_TYPE;
    }
    if (util_unlikely((hdr->flags & ~core_wire_flags_allowed(hdr->type)) != 0 ||
                      hdr->reserved != 0)) {
        return CORE_WIRE_BAD_FLAGS;
    }
    if (util_unlikely(hdr->seq != expected_seq)) {
        return CORE_WIRE_BAD_SEQ;
    }
    if (util_unlikely((hdr->type == CORE_WIRE_EAGER && hdr->length > max_length) ||
                      byte_len - sizeof(*hdr) != hdr->length)) {
        return CORE_WIRE_BAD_LENGTH;
    }
    if (util_unlikely(hdr->type == CORE_WIRE_CREDIT && (hdr->tag != 0 || hdr->length != 0))) {
        return hdr->tag != 0 ? CORE_WIRE_BAD_TAG : CORE_WIRE_BAD_LENGTH;
    }
    if (util_unlikely(hdr->type >= CORE_WIRE_RTS)) {
        const core_wire_rndv_t *body = (const core_wire_rndv_t *)(const void *)(hdr + 1);
        if (hdr->length != sizeof(*body)) {
            return CORE_WIRE_BAD_LENGTH;
        }
        if (hdr->type == CORE_WIRE_FIN && hdr->tag != 0) {
            return CORE_WIRE_BAD_TAG;
        }
        if (body->addr == 0 || body->addr + body->length < body->addr ||
            (hdr->type == CORE_WIRE_RTS && body->length == 0)) {
            return CORE_WIRE_BAD_RNDV;
        }
    }
    if (util_unlikely(hdr->credits > unreturned)) {
        return CORE_WIRE_BAD_CREDITS;
    }
    return CORE_WIRE_OK;
}

/**
 * Check a compact eager message (immediate imm, byte_len payload bytes): the format bit, a
 * payload of 1..max_length bytes and no more credits than unreturned. Its sequence number is
 * the expected one by construction.
 */
static inline core_wire_check_t core_wire_validate_imm(uint32_t imm, uint32_t byte_len,
                                                       uint64_t unreturned, uint32_t max_length)
{
    if (util_unlikely(!(imm & CORE_WIRE_IMM_COMPACT))) {
        return CORE_WIRE_BAD_TYPE;
    }
    if (util_unlikely(byte_len == 0 || byte_len > max_length)) {
        return CORE_WIRE_BAD_LENGTH;
    }
    if (util_unlikely(core_wire_imm_credits(imm) > unreturned)) {
        return CORE_WIRE_BAD_CREDITS;
    }
    return CORE_WIRE_OK;
}

/** A name for a check result, for logs. */
const char *core_wire_check_string(core_wire_check_t check);

#ifdef __cplusplus
}
#endif

#endif
