/*
 * Skips decided by the environment, not by the library under test: outside the Soft-RoCE guest
 * (test/vm/run sets IBMSG_VM=1) a test without its device or feature skips with the reason;
 * inside, the guest guarantees them, so the same absence fails the test.
 */
#ifndef IBMSG_TEST_GUEST_H
#define IBMSG_TEST_GUEST_H

#include <stdlib.h>
#include <string.h>

static inline int ibmsg_test_in_guest(void)
{
    const char *v = getenv("IBMSG_VM");
    return v != NULL && strcmp(v, "1") == 0;
}

#ifdef __cplusplus
/* Skips the test (returns from it) with why, or fails it in the guest. */
#define IBMSG_TEST_MISSING(why)                                    \
    do {                                                           \
        if (ibmsg_test_in_guest()) {                               \
            FAIL() << "the guest guarantees this, yet: " << (why); \
        }                                                          \
        GTEST_SKIP() << (why);                                     \
    } while (0)
#endif

#endif
