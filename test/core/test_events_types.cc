// The messaging core's event types as a tool sees them (no device needed): names, bindings,
// categories, elements laid out as the structs the core raises, and the enums of their INT
// elements. test_events.cc raises them on a device.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/core_events.h"
#include "ibmsg/tool.h"

namespace
{

struct Elem {
    const char *name;
    ibmsg_t_datatype_t type;
    long displ;
};

struct TypeDesc {
    const char *name;
    const char *category;
    const char *enum_name; // nullptr: none
    std::vector<Elem> elems;
    int bind = IBMSG_T_BIND_ENDPOINT;
};

const std::vector<TypeDesc> &expected()
{
    static const std::vector<TypeDesc> types = {
        {"core_ep_connected",
         "connection",
         nullptr,
         {{"qpn", IBMSG_T_UNSIGNED, offsetof(core_ev_ep_connected_elems_t, qpn)},
          {"peer_qpn", IBMSG_T_UNSIGNED, offsetof(core_ev_ep_connected_elems_t, peer_qpn)},
          {"credits", IBMSG_T_UNSIGNED, offsetof(core_ev_ep_connected_elems_t, credits)}}},
        {"core_ep_failed",
         "connection",
         "core_ep_fail_causes",
         {{"qpn", IBMSG_T_UNSIGNED, offsetof(core_ev_ep_failed_elems_t, qpn)},
          {"cause", IBMSG_T_INT, offsetof(core_ev_ep_failed_elems_t, cause)}}},
        {"core_rndv_started",
         "rendezvous",
         nullptr,
         {{"tag", IBMSG_T_UNSIGNED_LONG_LONG, offsetof(core_ev_rndv_elems_t, tag)},
          {"bytes", IBMSG_T_UNSIGNED_LONG_LONG, offsetof(core_ev_rndv_elems_t, bytes)},
          {"id", IBMSG_T_UNSIGNED, offsetof(core_ev_rndv_elems_t, id)},
          {"role", IBMSG_T_INT, offsetof(core_ev_rndv_elems_t, role)}}},
        {"core_rndv_completed",
         "rendezvous",
         nullptr,
         {{"tag", IBMSG_T_UNSIGNED_LONG_LONG, offsetof(core_ev_rndv_elems_t, tag)},
          {"bytes", IBMSG_T_UNSIGNED_LONG_LONG, offsetof(core_ev_rndv_elems_t, bytes)},
          {"id", IBMSG_T_UNSIGNED, offsetof(core_ev_rndv_elems_t, id)},
          {"role", IBMSG_T_INT, offsetof(core_ev_rndv_elems_t, role)},
          {"status", IBMSG_T_INT, offsetof(core_ev_rndv_elems_t, status)}}},
        {"core_send_stall_begun",
         "flow_control",
         "core_send_stall_reasons",
         {{"qpn", IBMSG_T_UNSIGNED, offsetof(core_ev_stall_begun_elems_t, qpn)},
          {"reason", IBMSG_T_INT, offsetof(core_ev_stall_begun_elems_t, reason)}}},
        {"core_send_stall_ended",
         "flow_control",
         nullptr,
         {{"duration_ns", IBMSG_T_UNSIGNED_LONG_LONG,
           offsetof(core_ev_stall_ended_elems_t, duration_ns)},
          {"qpn", IBMSG_T_UNSIGNED, offsetof(core_ev_stall_ended_elems_t, qpn)}}},
        {"core_srq_low",
         "receive_pool",
         nullptr,
         {{"posted", IBMSG_T_UNSIGNED, offsetof(core_ev_srq_elems_t, posted)},
          {"target", IBMSG_T_UNSIGNED, offsetof(core_ev_srq_elems_t, target)},
          {"limit", IBMSG_T_UNSIGNED, offsetof(core_ev_srq_elems_t, count)}},
         IBMSG_T_BIND_CONTEXT},
        {"core_srq_refilled",
         "receive_pool",
         nullptr,
         {{"posted", IBMSG_T_UNSIGNED, offsetof(core_ev_srq_elems_t, posted)},
          {"target", IBMSG_T_UNSIGNED, offsetof(core_ev_srq_elems_t, target)},
          {"added", IBMSG_T_UNSIGNED, offsetof(core_ev_srq_elems_t, count)}},
         IBMSG_T_BIND_CONTEXT},
        {"core_device_port_active",
         "device",
         nullptr,
         {{"port", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, id)},
          {"event_type", IBMSG_T_INT, offsetof(core_ev_device_elems_t, event_type)}},
         IBMSG_T_BIND_CONTEXT},
        {"core_device_port_down",
         "device",
         nullptr,
         {{"port", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, id)},
          {"event_type", IBMSG_T_INT, offsetof(core_ev_device_elems_t, event_type)},
          {"endpoints_failed", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, affected)}},
         IBMSG_T_BIND_CONTEXT},
        {"core_device_qp_fatal",
         "device",
         nullptr,
         {{"qpn", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, id)},
          {"event_type", IBMSG_T_INT, offsetof(core_ev_device_elems_t, event_type)},
          {"endpoints_failed", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, affected)}},
         IBMSG_T_BIND_CONTEXT},
        {"core_device_address_changed",
         "device",
         nullptr,
         {{"port", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, id)},
          {"event_type", IBMSG_T_INT, offsetof(core_ev_device_elems_t, event_type)},
          {"changed", IBMSG_T_UNSIGNED, offsetof(core_ev_device_elems_t, affected)}},
         IBMSG_T_BIND_CONTEXT},
    };
    return types;
}

struct CoreEventTypes : ::testing::Test {
    void SetUp() override
    {
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        core_events_register(); // at load already; again is harmless
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }
};

} // namespace

TEST_F(CoreEventTypes, RegisteredAsDocumented)
{
#if !IBMSG_HAVE_CORE_EVENTS
    GTEST_SKIP() << "built with -DIBMSG_CORE_EVENTS=OFF: the core registers no event type";
#endif
    for (const TypeDesc &t : expected()) {
        SCOPED_TRACE(t.name);
        int index = -1;
        ASSERT_EQ(ibmsg_t_event_get_index(t.name, &index), IBMSG_T_SUCCESS);
        ibmsg_t_datatype_t types[8];
        long displs[8];
        int num = 8, bind = -1, verbosity = -1;
        ibmsg_t_enum_t en = IBMSG_T_ENUM_NULL;
        ASSERT_EQ(ibmsg_t_event_get_info(index, nullptr, nullptr, &verbosity, types, displs, &num,
                                         &en, nullptr, nullptr, nullptr, &bind),
                  IBMSG_T_SUCCESS);
        EXPECT_EQ(bind, t.bind);
        EXPECT_EQ(verbosity, IBMSG_T_VERBOSITY_USER_DETAIL);
        ASSERT_EQ(num, int(t.elems.size()));
        for (int i = 0; i < num; i++) {
            char name[32];
            int len = sizeof(name);
            ASSERT_EQ(ibmsg_t_event_get_element_name(index, i, name, &len), IBMSG_T_SUCCESS);
            EXPECT_STREQ(name, t.elems[i].name);
            EXPECT_EQ(types[i], t.elems[i].type) << t.elems[i].name;
            EXPECT_EQ(displs[i], t.elems[i].displ) << t.elems[i].name;
        }
        if (t.enum_name == nullptr) {
            EXPECT_EQ(en, IBMSG_T_ENUM_NULL);
        } else {
            char name[64];
            int len = sizeof(name), n = 0;
            ASSERT_EQ(ibmsg_t_enum_get_info(en, &n, name, &len), IBMSG_T_SUCCESS);
            EXPECT_STREQ(name, t.enum_name);
            EXPECT_GT(n, 0);
        }
        int cat = -1, containing[8], ncont = 0;
        ASSERT_EQ(ibmsg_t_category_get_index(t.category, &cat), IBMSG_T_SUCCESS);
        ASSERT_EQ(
            ibmsg_t_category_get_containing(IBMSG_T_KIND_EVENT, index, 0, 8, containing, &ncont),
            IBMSG_T_SUCCESS);
        ASSERT_EQ(ncont, 1);
        EXPECT_EQ(containing[0], cat);
    }
    // The enums name every value.
    int index = -1, n = 0;
    ibmsg_t_enum_t en;
    ASSERT_EQ(ibmsg_t_event_get_index("core_ep_failed", &index), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_event_get_info(index, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     &en, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_enum_get_info(en, &n, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(n, IBMSG_T_EP_FAIL_PORT_DOWN + 1);
    const char *const causes[] = {"local",    "retry_exceeded", "keepalive", "completion_error",
                                  "goodbye",  "launcher",       "connect",   "flushed",
                                  "qp_fatal", "port_down"};
    for (int i = 0; i < n; i++) {
        int value = -1;
        char name[32];
        int len = sizeof(name);
        ASSERT_EQ(ibmsg_t_enum_get_item(en, i, &value, name, &len), IBMSG_T_SUCCESS);
        EXPECT_EQ(value, i);
        EXPECT_STREQ(name, causes[i]);
    }
}
