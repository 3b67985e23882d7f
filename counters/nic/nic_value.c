/* NIC counter widths, saturation and epochs: see nic_value.h for the semantics. */
#include "counters/nic/nic_value.h"

#include <string.h>

#include "util/compiler.h"

/*
 * The PMA PortCounters fields that have no extended (64-bit) version, with their widths (IBA
 * 1.4, 16.1.3.5). Their sysfs files stay narrow whatever the device supports.
 */
static const struct {
    const char *name;
    uint8_t width;
} cnt_nic_pma_narrow[] = {
    {"symbol_error", 16},
    {"link_error_recovery", 8},
    {"link_downed", 8},
    {"port_rcv_errors", 16},
    {"port_rcv_remote_physical_errors", 16},
    {"port_rcv_switch_relay_errors", 16},
    {"port_xmit_discards", 16},
    {"port_xmit_constraint_errors", 8},
    {"port_rcv_constraint_errors", 8},
    {"local_link_integrity_errors", 4},
    {"excessive_buffer_overrun_errors", 4},
    {"VL15_dropped", 16},
    {"port_xmit_wait", 32},
};

/* Data and packet counters: 32-bit in PortCounters, 64-bit with extended width. */
static const char *const cnt_nic_pma_extendable[] = {
    "port_xmit_data",         "port_rcv_data",         "port_xmit_packets",
    "port_rcv_packets",       "unicast_xmit_packets",  "unicast_rcv_packets",
    "multicast_xmit_packets", "multicast_rcv_packets",
};

void cnt_nic_value_init(cnt_nic_value_t *v, bool hw, const char *name)
{
    memset(v, 0, sizeof(*v));
    v->width = 64;
    if (hw) {
        return;
    }
    for (size_t i = 0; i < UTIL_ARRAY_SIZE(cnt_nic_pma_narrow); i++) {
        if (strcmp(name, cnt_nic_pma_narrow[i].name) == 0) {
            v->width = cnt_nic_pma_narrow[i].width;
            return;
        }
    }
    for (size_t i = 0; i < UTIL_ARRAY_SIZE(cnt_nic_pma_extendable); i++) {
        if (strcmp(name, cnt_nic_pma_extendable[i]) == 0) {
            v->width = 32;
            v->may_widen = true;
            return;
        }
    }
}

static uint64_t cnt_nic_all_ones(uint8_t width)
{
    return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

uint64_t cnt_nic_value_update(cnt_nic_value_t *v, uint64_t raw)
{
    if (v->width < 64 && raw > cnt_nic_all_ones(v->width)) {
        /*
         * Wider than we assumed: the extended PMA counters (the expected case), or a driver that
         * reports a known-narrow counter wider. Either way it cannot saturate at our width.
         */
        v->width = 64;
        v->may_widen = false;
    }
    if (v->saturated) {
        v->last = raw;
        return CNT_NIC_TOTAL_SATURATED;
    }
    if (v->initialized && raw < v->last) {
        v->base += v->last;
        v->epochs++;
    }
    v->last = raw;
    v->initialized = true;
    if (v->width < 64 && raw == cnt_nic_all_ones(v->width)) {
        v->saturated = true;
        return CNT_NIC_TOTAL_SATURATED;
    }
    if (raw > UINT64_MAX - 1 - v->base) {
        /* The sum over epochs no longer fits: as unknown as a saturated counter. */
        v->saturated = true;
        return CNT_NIC_TOTAL_SATURATED;
    }
    return v->base + raw;
}

uint64_t cnt_nic_value_total(const cnt_nic_value_t *v)
{
    if (v->saturated) {
        return CNT_NIC_TOTAL_SATURATED;
    }
    return v->initialized ? v->base + v->last : 0;
}

bool cnt_nic_counts_words(bool hw, const char *name)
{
    return !hw && (strcmp(name, "port_xmit_data") == 0 || strcmp(name, "port_rcv_data") == 0);
}

uint64_t cnt_nic_words_to_bytes(uint64_t words)
{
    if (words > UINT64_MAX / 4) {
        return CNT_NIC_TOTAL_SATURATED;
    }
    return words * 4;
}
