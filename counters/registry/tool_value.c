/*
 * Values by datatype: the per-element arithmetic of sessions (accumulate, watermarks) and the
 * default reads and writes through a context pointer. Integer arithmetic is modular (done in
 * the unsigned type of the same width) so a counter that wraps still gives exact deltas.
 */
#include "counters/registry/tool_internal.h"

#include <string.h>

size_t cnt_datatype_size(ibmsg_t_datatype_t dt)
{
    switch (dt) {
    case IBMSG_T_INT:
        return sizeof(int);
    case IBMSG_T_UNSIGNED:
        return sizeof(unsigned);
    case IBMSG_T_UNSIGNED_LONG:
        return sizeof(unsigned long);
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return sizeof(unsigned long long);
    case IBMSG_T_COUNT:
        return sizeof(long long);
    case IBMSG_T_CHAR:
        return 1;
    case IBMSG_T_DOUBLE:
        return sizeof(double);
    default:
        return 0;
    }
}

int cnt_datatype_is_unsigned(ibmsg_t_datatype_t dt)
{
    return dt == IBMSG_T_UNSIGNED || dt == IBMSG_T_UNSIGNED_LONG ||
           dt == IBMSG_T_UNSIGNED_LONG_LONG;
}

/* The elements of a handle's acc and base are read by lock-free readers inside a seqlock while
   a writer (lock held) changes them: every access is a relaxed atomic, so the race is defined
   (C11) and a torn read is retried by the seqlock, not undefined behaviour. */
#define VALUE_LOAD(p, v)  __atomic_load((p), (v), __ATOMIC_RELAXED)
#define VALUE_STORE(p, v) __atomic_store((p), (v), __ATOMIC_RELAXED)

#define VALUE_ACCUMULATE(utype)                    \
    do {                                           \
        utype *o = out;                            \
        const utype *a = acc, *c = cur, *b = base; \
        for (int i = 0; i < n; i++) {              \
            utype av, cv, bv, ov;                  \
            VALUE_LOAD(&a[i], &av);                \
            VALUE_LOAD(&c[i], &cv);                \
            VALUE_LOAD(&b[i], &bv);                \
            ov = (utype)(av + (utype)(cv - bv));   \
            VALUE_STORE(&o[i], &ov);               \
        }                                          \
    } while (0)

void cnt_value_accumulate(ibmsg_t_datatype_t dt, int n, void *out, const void *acc, const void *cur,
                          const void *base)
{
    switch (dt) {
    case IBMSG_T_INT:
    case IBMSG_T_UNSIGNED:
        VALUE_ACCUMULATE(unsigned);
        break;
    case IBMSG_T_UNSIGNED_LONG:
        VALUE_ACCUMULATE(unsigned long);
        break;
    case IBMSG_T_UNSIGNED_LONG_LONG:
    case IBMSG_T_COUNT:
        VALUE_ACCUMULATE(unsigned long long);
        break;
    case IBMSG_T_DOUBLE: {
        double *o = out;
        const double *a = acc, *c = cur, *b = base;
        for (int i = 0; i < n; i++) {
            double av, cv, bv, ov;
            VALUE_LOAD(&a[i], &av);
            VALUE_LOAD(&c[i], &cv);
            VALUE_LOAD(&b[i], &bv);
            ov = av + (cv - bv);
            VALUE_STORE(&o[i], &ov);
        }
        break;
    }
    default: /* chars are strings: no arithmetic */
        break;
    }
}

#define VALUE_BETTER(type, x, y) (high ? (type)(x) > (type)(y) : (type)(x) < (type)(y))

/* Compare-and-swap loop on an element of width uint_t interpreted as type. */
#define VALUE_CAS_EXTREME(type, uint_t)                                                 \
    do {                                                                                \
        uint_t *w = wm;                                                                 \
        uint_t *c = cur;                                                                \
        for (int i = 0; i < n; i++) {                                                   \
            uint_t old = __atomic_load_n(&w[i], __ATOMIC_RELAXED);                      \
            for (;;) {                                                                  \
                type o, v;                                                              \
                memcpy(&o, &old, sizeof(o));                                            \
                memcpy(&v, &c[i], sizeof(v));                                           \
                if (!VALUE_BETTER(type, v, o)) {                                        \
                    c[i] = old;                                                         \
                    break;                                                              \
                }                                                                       \
                if (__atomic_compare_exchange_n(&w[i], &old, c[i], 0, __ATOMIC_RELAXED, \
                                                __ATOMIC_RELAXED)) {                    \
                    break;                                                              \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    } while (0)

void cnt_value_watermark(ibmsg_t_datatype_t dt, int n, void *wm, void *cur, int high)
{
    switch (dt) {
    case IBMSG_T_INT:
        VALUE_CAS_EXTREME(int, unsigned);
        break;
    case IBMSG_T_UNSIGNED:
        VALUE_CAS_EXTREME(unsigned, unsigned);
        break;
    case IBMSG_T_UNSIGNED_LONG:
        VALUE_CAS_EXTREME(unsigned long, unsigned long);
        break;
    case IBMSG_T_UNSIGNED_LONG_LONG:
        VALUE_CAS_EXTREME(unsigned long long, unsigned long long);
        break;
    case IBMSG_T_COUNT:
        VALUE_CAS_EXTREME(long long, unsigned long long);
        break;
    case IBMSG_T_DOUBLE:
        VALUE_CAS_EXTREME(double, unsigned long long);
        break;
    default:
        break;
    }
}

#define VALUE_EXTREME(type)                   \
    do {                                      \
        type *w = wm;                         \
        const type *c = cur;                  \
        for (int i = 0; i < n; i++) {         \
            type wv, cv;                      \
            VALUE_LOAD(&w[i], &wv);           \
            VALUE_LOAD(&c[i], &cv);           \
            if (VALUE_BETTER(type, cv, wv)) { \
                VALUE_STORE(&w[i], &cv);      \
            }                                 \
        }                                     \
    } while (0)

void cnt_value_extreme(ibmsg_t_datatype_t dt, int n, void *wm, const void *cur, int high)
{
    switch (dt) {
    case IBMSG_T_INT:
        VALUE_EXTREME(int);
        break;
    case IBMSG_T_UNSIGNED:
        VALUE_EXTREME(unsigned);
        break;
    case IBMSG_T_UNSIGNED_LONG:
        VALUE_EXTREME(unsigned long);
        break;
    case IBMSG_T_UNSIGNED_LONG_LONG:
        VALUE_EXTREME(unsigned long long);
        break;
    case IBMSG_T_COUNT:
        VALUE_EXTREME(long long);
        break;
    case IBMSG_T_DOUBLE:
        VALUE_EXTREME(double);
        break;
    default:
        break;
    }
}

#define VALUE_COPY_ATOMIC(uint_t, dst, src)                                            \
    do {                                                                               \
        for (int i = 0; i < n; i++) {                                                  \
            uint_t v = __atomic_load_n(&((const uint_t *)(src))[i], __ATOMIC_RELAXED); \
            __atomic_store_n(&((uint_t *)(dst))[i], v, __ATOMIC_RELAXED);              \
        }                                                                              \
    } while (0)

static void value_copy(ibmsg_t_datatype_t dt, int n, void *dst, const void *src)
{
    switch (cnt_datatype_size(dt)) {
    case 1:
        VALUE_COPY_ATOMIC(unsigned char, dst, src);
        break;
    case 4:
        VALUE_COPY_ATOMIC(uint32_t, dst, src);
        break;
    case 8:
        VALUE_COPY_ATOMIC(uint64_t, dst, src);
        break;
    default:
        break;
    }
}

void cnt_value_load(ibmsg_t_datatype_t dt, int n, const void *ctx, void *buf)
{
    value_copy(dt, n, buf, ctx);
}

void cnt_value_store(ibmsg_t_datatype_t dt, int n, void *ctx, const void *buf)
{
    value_copy(dt, n, ctx, buf);
}

void cnt_value_clear(ibmsg_t_datatype_t dt, int n, void *dst)
{
    static const uint64_t zero = 0;

    for (int i = 0; i < n; i++) {
        value_copy(dt, 1, (char *)dst + (size_t)i * cnt_datatype_size(dt), &zero);
    }
}
