/* Names of wire-header check results. */
#include "core/wire.h"

UTIL_STATIC_ASSERT(sizeof(core_wire_hdr_t) == 24, "the wire header is 24 bytes");
UTIL_STATIC_ASSERT(sizeof(core_wire_rndv_t) == 24, "the rendezvous body is 24 bytes");

const char *core_wire_check_string(core_wire_check_t check)
{
    static const char *const names[CORE_WIRE_CHECK_LAST] = {
        [CORE_WIRE_OK] = "ok",
        [CORE_WIRE_SHORT] = "shorter than a header",
        [CORE_WIRE_BAD_TYPE] = "unknown type",
        [CORE_WIRE_BAD_FLAGS] = "reserved bits set",
        [CORE_WIRE_BAD_SEQ] = "out of sequence",
        [CORE_WIRE_BAD_LENGTH] = "bad length",
        [CORE_WIRE_BAD_TAG] = "tag on a control message",
        [CORE_WIRE_BAD_CREDITS] = "more credits than outstanding",
        [CORE_WIRE_BAD_RNDV] = "bad rendezvous address or length",
    };
    return (unsigned)check < CORE_WIRE_CHECK_LAST ? names[check] : "unknown";
}
