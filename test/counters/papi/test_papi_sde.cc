// ibmsg's software counters as PAPI software-defined events (counters/papi/papi_sde.h): a PAPI tool
// in this process reads sde:::ibmsg::<counter> and sees what the pvar of the same name reads.
#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "counters/papi/papi_sde.h"
#include "counters/shards/shard.h"
#include "ibmsg_config.h"

#if IBMSG_HAVE_PAPI
#include <papi.h>
#endif

namespace
{

#if IBMSG_HAVE_SDE
class PapiSde : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        // As a PAPI tool does: PAPI first. libsde is already in the process (libibmsg links it),
        // so the sde component is enabled; the events were registered when the library loaded.
        ASSERT_EQ(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_pvar_session_create(&s_), IBMSG_T_SUCCESS);
        ASSERT_TRUE(cnt_papi_sde_registered());
        int cidx = PAPI_get_component_index("sde");
        ASSERT_GE(cidx, 0);
        const PAPI_component_info_t *ci = PAPI_get_component_info(cidx);
        ASSERT_NE(ci, nullptr);
        ASSERT_EQ(ci->disabled, 0) << ci->disabled_reason;
        ASSERT_EQ(PAPI_create_eventset(&set_), PAPI_OK);
    }
    void TearDown() override
    {
        long long v[2];
        PAPI_stop(set_, v);
        PAPI_cleanup_eventset(set_);
        PAPI_destroy_eventset(&set_);
        EXPECT_EQ(ibmsg_t_pvar_session_free(&s_), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }
    ibmsg_t_pvar_handle_t handle(const char *name, int var_class)
    {
        int index = -1, count = 0;
        ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
        EXPECT_EQ(ibmsg_t_pvar_get_index(name, var_class, &index), IBMSG_T_SUCCESS) << name;
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s_, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
        return h;
    }
    void add_event(const char *name)
    {
        int code = 0;
        ASSERT_EQ(PAPI_event_name_to_code(name, &code), PAPI_OK) << name;
        ASSERT_EQ(PAPI_add_event(set_, code), PAPI_OK) << name;
    }

    ibmsg_t_pvar_session_t s_ = IBMSG_T_PVAR_SESSION_NULL;
    int set_ = PAPI_NULL;
};

TEST_F(PapiSde, PapiReaderSeesThePvarValue)
{
    // A counter (DELTA: growth since PAPI_start, as a started handle) and a level (INSTANT).
    add_event("sde:::ibmsg::verbs_cq_polls");
    add_event("sde:::ibmsg::verbs_buf_pool_in_use");
    ibmsg_t_pvar_handle_t polls = handle("verbs_cq_polls", IBMSG_T_PVAR_CLASS_COUNTER);
    ibmsg_t_pvar_handle_t pool = handle("verbs_buf_pool_in_use", IBMSG_T_PVAR_CLASS_LEVEL);
    cnt_add(cnt_shard_get(), CNT_VERBS_CQ_POLLS, 1000); // before: in neither delta
    ASSERT_EQ(ibmsg_t_pvar_start(s_, polls), IBMSG_T_SUCCESS);
    ASSERT_EQ(PAPI_start(set_), PAPI_OK);

    // This thread, and a thread that exits before the read (its counts are retired totals).
    cnt_add(cnt_shard_get(), CNT_VERBS_CQ_POLLS, 42);
    cnt_level_add(cnt_shard_get(), CNT_VERBS_BUF_POOL_IN_USE, 5);
    std::thread([] {
        cnt_add(cnt_shard_get(), CNT_VERBS_CQ_POLLS, 8);
        cnt_level_add(cnt_shard_get(), CNT_VERBS_BUF_POOL_IN_USE, -2);
    }).join();

    long long v[2] = {-1, -1};
    ASSERT_EQ(PAPI_read(set_, v), PAPI_OK);
    unsigned long long p = 0;
    long long level = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s_, polls, &p), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_read(s_, pool, &level), IBMSG_T_SUCCESS);
    EXPECT_EQ(p, 50u);
    EXPECT_EQ(v[0], (long long)p);
    EXPECT_EQ(level, (long long)cnt_read(nullptr, CNT_VERBS_BUF_POOL_IN_USE, CNT_READ_VALUE));
    EXPECT_EQ(v[1], level);

    // Later growth shows in both.
    cnt_add(cnt_shard_get(), CNT_VERBS_CQ_POLLS, 7);
    ASSERT_EQ(PAPI_read(set_, v), PAPI_OK);
    ASSERT_EQ(ibmsg_t_pvar_read(s_, polls, &p), IBMSG_T_SUCCESS);
    EXPECT_EQ(p, 57u);
    EXPECT_EQ(v[0], 57);
}

// PAPI_event_name_to_code accepts any sde:::ibmsg:: name (libsde makes a placeholder for an
// event a library may register later), so names are checked by enumeration: the sde events are
// exactly the table's counters. Then each event alone reads its own counter: a name wired to
// another id reads a different value (each counter grows by its own id + 1).
TEST_F(PapiSde, EveryCounterIsAnEvent)
{
    const std::string prefix = "sde:::ibmsg::";
    std::set<std::string> table, events;
#define CNT_SDE_NAME(id, name, kind, owner, verbosity, category, desc) table.insert(prefix + name);
    CNT_COUNTER_TABLE(CNT_SDE_NAME)
#undef CNT_SDE_NAME
    ASSERT_EQ(table.size(), size_t(CNT_COUNTER_COUNT));
    int cidx = PAPI_get_component_index("sde");
    int code = PAPI_NATIVE_MASK;
    ASSERT_EQ(PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cidx), PAPI_OK);
    do {
        char name[PAPI_MAX_STR_LEN];
        ASSERT_EQ(PAPI_event_code_to_name(code, name), PAPI_OK);
        if (std::string(name).rfind(prefix, 0) == 0) {
            events.insert(name);
        }
    } while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cidx) == PAPI_OK);
    EXPECT_EQ(events, table);

    enum { COUNTER, TIMER, LEVEL, LEVEL_WM };
    struct Counter {
        cnt_id_t id;
        const char *name;
        int kind;
    };
    const Counter counters[] = {
#define CNT_SDE_ENTRY(id, name, kind, owner, verbosity, category, desc) {CNT_##id, name, kind},
        CNT_COUNTER_TABLE(CNT_SDE_ENTRY)
#undef CNT_SDE_ENTRY
    };
    for (const Counter &c : counters) {
        int set = PAPI_NULL;
        ASSERT_EQ(PAPI_create_eventset(&set), PAPI_OK);
        ASSERT_EQ(PAPI_event_name_to_code((prefix + c.name).c_str(), &code), PAPI_OK) << c.name;
        ASSERT_EQ(PAPI_add_event(set, code), PAPI_OK) << c.name;
        const uint64_t before = cnt_read(nullptr, c.id, CNT_READ_VALUE);
        ASSERT_EQ(PAPI_start(set), PAPI_OK) << c.name;
        const bool level = c.kind == LEVEL || c.kind == LEVEL_WM;
        if (level) {
            cnt_level_add(cnt_shard_get(), c.id, int64_t(c.id) + 1);
        } else {
            // Timers count ticks (read as nanoseconds): enough of them to show.
            cnt_add(cnt_shard_get(), c.id, (uint64_t(c.id) + 1) * (c.kind == TIMER ? 1000000 : 1));
        }
        const uint64_t after = cnt_read(nullptr, c.id, CNT_READ_VALUE);
        long long v = -1;
        ASSERT_EQ(PAPI_read(set, &v), PAPI_OK) << c.name;
        // Counters: the growth since PAPI_start (DELTA); levels: the value now (INSTANT). A
        // timer's ticks read as nanoseconds, so its growth is what the shards report.
        EXPECT_EQ(v, (long long)(level ? after : after - before)) << c.name;
        EXPECT_NE(after, before) << c.name;
        if (level) {
            cnt_level_add(cnt_shard_get(), c.id, -(int64_t(c.id) + 1));
        }
        long long stop[1];
        PAPI_stop(set, stop);
        PAPI_cleanup_eventset(set);
        PAPI_destroy_eventset(&set);
    }
}
#else
TEST(PapiSde, NotCompiledIn)
{
    EXPECT_FALSE(cnt_papi_sde_registered());
    EXPECT_EQ(cnt_papi_sde_register(), IBMSG_ERR_NOT_SUPPORTED);
    GTEST_SKIP() << "built without PAPI software-defined events (libsde / IBMSG_WITH_PAPI=OFF)";
}
#endif

} // namespace
