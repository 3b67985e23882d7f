// The world's RDMA tests: whether a device opens (else they skip, or fail in the guest).
#ifndef IBMSG_TEST_WORLD_WORLD_DEVICE_H
#define IBMSG_TEST_WORLD_WORLD_DEVICE_H

#include <ibmsg/ibmsg.h>

namespace world_test
{

constexpr const char *kSkip = "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma";

inline bool have_device()
{
    ibmsg_context_t probe;
    if (ibmsg_context_create(IBMSG_INFO_NULL, &probe) != IBMSG_OK) {
        return false;
    }
    ibmsg_context_destroy(probe);
    return true;
}

} // namespace world_test

#endif
