/*
 * What one NIC port counter's raw readings mean: counter width, saturation and epochs, turned
 * into the monotonic "virtual total" the registry's session arithmetic needs.
 *
 * Hardware facts this encodes:
 * - IB PMA counters (sysfs ports/N/counters/) are narrow (4 to 32 bits) and SATURATE at all ones
 *   instead of wrapping. The data and packet counters are 32-bit, or 64-bit when the device
 *   supports the extended PMA counters (the kernel then reads PortCountersExtended); sysfs does
 *   not say which, so a reading above 2^32-1 is taken as the proof of 64 bits.
 * - hw_counters/ values are 64-bit driver counters (they do not saturate in practice).
 * - A counter can go backwards when the device is reset or someone clears it (perfquery -R).
 *
 * Virtual total (what read returns; monotonic non-decreasing for the life of the process):
 * - normally base + raw, where base is the sum of the last values seen in earlier epochs; a
 *   reading below the previous one starts a new epoch (base += previous reading), so a reset
 *   never shows up as a huge delta. Events between the last reading of an epoch and the reset
 *   are not seen (the total is then a lower bound).
 * - once a narrow counter reads all ones at its width, it is SATURATED: its true total is unknown
 *   and the virtual total becomes CNT_NIC_TOTAL_SATURATED (UINT64_MAX) and stays so (absorbing,
 *   which keeps the total monotonic: an unknown term makes every later sum unknown). With the
 *   registry's arithmetic (accumulated + current - start, unsigned 64-bit) a handle whose running
 *   interval contains the moment of saturation then reads UINT64_MAX - start (>= 2^63 for any
 *   realistic start), and a handle started after saturation reads 0 (no further change is
 *   visible). In both cases the port's nic_saturated variable lists the counter: a tool must
 *   treat a NIC counter listed there as "value unknown" whatever delta it reads.
 */
#ifndef IBMSG_COUNTERS_NIC_VALUE_H
#define IBMSG_COUNTERS_NIC_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CNT_NIC_TOTAL_SATURATED UINT64_MAX

typedef struct cnt_nic_value {
    uint64_t base;    /* sum of the last readings of the finished epochs */
    uint64_t last;    /* last raw reading */
    uint32_t epochs;  /* readings that went backwards (resets seen) */
    uint8_t width;    /* bits: the counter saturates at 2^width - 1; 64 = does not saturate */
    bool may_widen;   /* 32-bit unless a reading proves 64 (PMA data/packet counters) */
    bool initialized; /* a first reading was taken */
    bool saturated;   /* sticky: see the header comment */
} cnt_nic_value_t;

/**
 * Set up the state of a counter from its sysfs directory (hw is true for hw_counters/, false for
 * counters/) and file name: the width of the well-known PMA counters, 32-or-64 for the PMA data
 * and packet counters, 64 for everything else.
 */
void cnt_nic_value_init(cnt_nic_value_t *v, bool hw, const char *name);

/**
 * Fold in a new raw reading and return the virtual total. Not thread safe: the caller
 * serialises readings of one counter (the port lock), in the order they were taken.
 */
uint64_t cnt_nic_value_update(cnt_nic_value_t *v, uint64_t raw);

/** The virtual total as of the last update (0 before the first). */
uint64_t cnt_nic_value_total(const cnt_nic_value_t *v);

/** Whether name (in counters/) counts 4-byte words (IB PMA port_xmit_data, port_rcv_data). */
bool cnt_nic_counts_words(bool hw, const char *name);

/** 4 * words, saturating (a saturated or overflowing total stays CNT_NIC_TOTAL_SATURATED). */
uint64_t cnt_nic_words_to_bytes(uint64_t words);

#ifdef __cplusplus
}
#endif

#endif
