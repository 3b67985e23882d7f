/*
 * Events (MPI-4.1 §15.3.8 as tool.h states it) and timestamp sources: registration of types and
 * sources, the descriptive calls, registrations and their callbacks, the selection rule, drops
 * and their ordering, instances, freeing (from inside a callback too), concurrency.
 */
#include "tool_fixture.h"

#include "counters/registry/tool_internal.h"

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace
{

/* The elements of the test type, laid out as the registry lays them out. */
struct TestElems {
    int cause;
    unsigned long long bytes;
    char c;
    unsigned qpn;
};
const ibmsg_t_datatype_t test_types[] = {IBMSG_T_INT, IBMSG_T_UNSIGNED_LONG_LONG, IBMSG_T_CHAR,
                                         IBMSG_T_UNSIGNED};
const char *const test_names[] = {"cause", "bytes", "c", "qpn"};

/* A deterministic clock: every reading is the next integer. */
std::atomic<long long> fake_now{1000};
long long fake_clock(void *ctx)
{
    (void)ctx;
    return ++fake_now;
}

/* Raise objects live for the process, as the registry keeps pointers to them. */
cnt_event_t *new_event()
{
    static std::deque<cnt_event_t> events;
    events.push_back(CNT_EVENT_INIT);
    return &events.back();
}

/* What a callback saw. */
struct Seen {
    std::string what; /* "cb" or "dropped" */
    int level = -1;
    void *user_data = nullptr;
    ibmsg_t_event_registration_t reg = IBMSG_T_EVENT_REGISTRATION_NULL;
    long long ts = -1;
    int source = -1;
    int count = 0;
    TestElems elems = {};
};

std::vector<Seen> *seen_log;

void log_cb(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t reg,
            ibmsg_t_cb_safety_t level, void *user_data)
{
    Seen s;
    s.what = "cb";
    s.level = level;
    s.user_data = user_data;
    s.reg = reg;
    EXPECT_EQ(ibmsg_t_event_get_timestamp(inst, &s.ts), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_get_source(inst, &s.source), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_copy(inst, &s.elems), IBMSG_T_SUCCESS);
    seen_log->push_back(s);
}

void log_cb2(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t reg,
             ibmsg_t_cb_safety_t level, void *user_data)
{
    log_cb(inst, reg, level, user_data);
    seen_log->back().what = "cb2";
}

void log_dropped(int count, ibmsg_t_event_registration_t reg, int source, ibmsg_t_cb_safety_t level,
                 void *user_data)
{
    Seen s;
    s.what = "dropped";
    s.count = count;
    s.reg = reg;
    s.source = source;
    s.level = level;
    s.user_data = user_data;
    seen_log->push_back(s);
}

struct Freed {
    int calls = 0;
    ibmsg_t_event_registration_t reg = IBMSG_T_EVENT_REGISTRATION_NULL;
    int level = -1;
};

void free_cb(ibmsg_t_event_registration_t reg, ibmsg_t_cb_safety_t level, void *user_data)
{
    Freed *f = static_cast<Freed *>(user_data);
    f->calls++;
    f->reg = reg;
    f->level = level;
}

int ud_a, ud_b, ud_c, ud_d; /* user_data values: their addresses */

} // namespace

class ToolEvent : public ToolTest
{
  public:
    void SetUp() override
    {
        ToolTest::SetUp();
        seen_log = &seen;
        cnt_source_desc_t d = {};
        d.name = "test_fake_clock";
        d.desc = "a clock that counts its readings";
        d.ordering = IBMSG_T_SOURCE_ORDERED;
        d.ticks_per_second = 1000;
        d.max_ticks = LLONG_MAX;
        d.clock = fake_clock;
        ASSERT_EQ(cnt_source_register(&d, &fake_source), IBMSG_OK);
    }
    void TearDown() override
    {
        seen_log = nullptr;
        ToolTest::TearDown();
    }

    /* A type with the four test elements on the fake clock; its index in *index. */
    cnt_event_t *add_event(const char *what, int bind = IBMSG_T_BIND_NO_OBJECT,
                           const char *category = nullptr, int *index = nullptr)
    {
        std::string name = tool_unique(what);
        cnt_event_desc_t d = {};
        d.name = name.c_str();
        d.verbosity = IBMSG_T_VERBOSITY_USER_DETAIL;
        d.bind = bind;
        d.num_elements = 4;
        d.datatypes = test_types;
        d.element_names = test_names;
        d.source = fake_source;
        d.category = category;
        d.desc = "a test event";
        cnt_event_t *ev = new_event();
        EXPECT_EQ(cnt_event_register(&d, ev), IBMSG_OK) << name;
        if (index != nullptr) {
            *index = ev->index;
        }
        return ev;
    }

    ibmsg_t_event_registration_t alloc(cnt_event_t *ev, void *obj_handle = nullptr)
    {
        ibmsg_t_event_registration_t reg = IBMSG_T_EVENT_REGISTRATION_NULL;
        EXPECT_EQ(ibmsg_t_event_handle_alloc(ev->index, obj_handle, IBMSG_INFO_NULL, &reg),
                  IBMSG_T_SUCCESS);
        return reg;
    }

    static void raise(cnt_event_t *ev, int cause, const void *obj = nullptr,
                      ibmsg_t_cb_safety_t required = IBMSG_T_CB_REQUIRE_MPI_RESTRICTED)
    {
        TestElems e = {cause, 1000ull + (unsigned)cause, 'x', 7u};
        cnt_event_raise(ev, obj, &e, required);
    }

    static int on(ibmsg_t_event_registration_t reg, ibmsg_t_cb_safety_t level, void *ud,
                  ibmsg_t_event_cb_function_t fn = log_cb)
    {
        return ibmsg_t_event_register_callback(reg, level, IBMSG_INFO_NULL, ud, fn);
    }

    std::vector<Seen> seen;
    int fake_source = -1;
};

/* ---- Types and their description ----------------------------------------------------------- */

TEST_F(ToolEvent, TypesAreListedAndDescribed)
{
    int before = -1, after = -1, cat = -1, changed0 = -1, changed1 = -1, index = -1;
    std::string cname = tool_unique("cat");
    ASSERT_EQ(cnt_category_register(cname.c_str(), "events of a test", "ibmsg", &cat), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_event_get_num(&before), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_changed(&changed0), IBMSG_T_SUCCESS);
    cnt_event_t *ev = add_event("ev", IBMSG_T_BIND_ENDPOINT, cname.c_str(), &index);
    ASSERT_EQ(ibmsg_t_event_get_num(&after), IBMSG_T_SUCCESS);
    EXPECT_EQ(after, before + 1);
    EXPECT_EQ(index, before); /* appended: indices never move */
    ASSERT_EQ(ibmsg_t_category_changed(&changed1), IBMSG_T_SUCCESS);
    EXPECT_GT(changed1, changed0);

    char name[128], desc[64];
    int nl = sizeof(name), dl = sizeof(desc), verbosity = -1, bind = -1, num = 4;
    ibmsg_t_datatype_t dts[4];
    long displs[4];
    ibmsg_t_enum_t en = (ibmsg_t_enum_t)1;
    ibmsg_info_t info = IBMSG_INFO_NULL;
    ASSERT_EQ(ibmsg_t_event_get_info(index, name, &nl, &verbosity, dts, displs, &num, &en, &info,
                                     desc, &dl, &bind),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(std::string(name), tool_unique("ev"));
    EXPECT_EQ(nl, (int)tool_unique("ev").size() + 1);
    EXPECT_STREQ(desc, "a test event");
    EXPECT_EQ(verbosity, IBMSG_T_VERBOSITY_USER_DETAIL);
    EXPECT_EQ(bind, IBMSG_T_BIND_ENDPOINT);
    EXPECT_EQ(en, IBMSG_T_ENUM_NULL);
    EXPECT_EQ(num, 4);
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(dts[i], test_types[i]);
    }
    /* Displacements ascend from 0, as the C struct of the elements lays them out. */
    EXPECT_EQ(displs[0], (long)offsetof(TestElems, cause));
    EXPECT_EQ(displs[1], (long)offsetof(TestElems, bytes));
    EXPECT_EQ(displs[2], (long)offsetof(TestElems, c));
    EXPECT_EQ(displs[3], (long)offsetof(TestElems, qpn));
    int nkeys = -1;
    ASSERT_EQ(ibmsg_info_get_nkeys(info, &nkeys), IBMSG_OK);
    EXPECT_EQ(nkeys, 0);
    EXPECT_EQ(ibmsg_info_free(&info), IBMSG_OK);

    /* num_elements in/out: at most the input length written, the type's count returned. */
    ibmsg_t_datatype_t two[3] = {IBMSG_T_DATATYPE_NULL, IBMSG_T_DATATYPE_NULL,
                                 IBMSG_T_DATATYPE_NULL};
    num = 2;
    ASSERT_EQ(ibmsg_t_event_get_info(index, nullptr, nullptr, nullptr, two, nullptr, &num, nullptr,
                                     nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 4);
    EXPECT_EQ(two[1], IBMSG_T_UNSIGNED_LONG_LONG);
    EXPECT_EQ(two[2], IBMSG_T_DATATYPE_NULL);
    num = 0;
    ASSERT_EQ(ibmsg_t_event_get_info(index, nullptr, nullptr, nullptr, nullptr, nullptr, &num,
                                     nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 4);
    num = -1;
    EXPECT_EQ(ibmsg_t_event_get_info(index, nullptr, nullptr, nullptr, nullptr, nullptr, &num,
                                     nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_get_info(after, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_get_info(-1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);

    /* Element names (an ibmsg extension). */
    char el[16];
    int ell = sizeof(el);
    ASSERT_EQ(ibmsg_t_event_get_element_name(index, 1, el, &ell), IBMSG_T_SUCCESS);
    EXPECT_STREQ(el, "bytes");
    EXPECT_EQ(ell, 6);
    EXPECT_EQ(ibmsg_t_event_get_element_name(index, 4, el, &ell), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_get_element_name(index, -1, el, &ell), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_get_element_name(after, 0, el, &ell), IBMSG_T_ERR_INVALID_INDEX);

    /* By name. */
    int found = -1;
    ASSERT_EQ(ibmsg_t_event_get_index(tool_unique("ev").c_str(), &found), IBMSG_T_SUCCESS);
    EXPECT_EQ(found, index);
    EXPECT_EQ(ibmsg_t_event_get_index("no_such_event", &found), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(ibmsg_t_event_get_index(nullptr, &found), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_get_index("x", nullptr), IBMSG_T_ERR_INVALID);

    /* Its category lists it. */
    int nev = -1, members[2] = {-1, -1};
    ASSERT_EQ(ibmsg_t_category_get_num_events(cat, &nev), IBMSG_T_SUCCESS);
    EXPECT_EQ(nev, 1);
    ASSERT_EQ(ibmsg_t_category_get_events(cat, 2, members), IBMSG_T_SUCCESS);
    EXPECT_EQ(members[0], index);
    EXPECT_EQ(members[1], -1);
    EXPECT_EQ(ibmsg_t_category_get_num_events(cat, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_get_num_events(-1, &nev), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_category_get_events(cat, -1, members), IBMSG_T_ERR_INVALID);
    int containing[4], ncont = -1;
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_EVENT, index, 1, 4, containing, &ncont),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(ncont, 2); /* its category, then ibmsg */
    EXPECT_EQ(containing[0], cat);
    EXPECT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_EVENT, after, 0, 0, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    (void)ev;
}

TEST_F(ToolEvent, RegistrationChecksTheDescription)
{
    std::string name = tool_unique("ev");
    cnt_event_desc_t d = {};
    d.name = name.c_str();
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.bind = IBMSG_T_BIND_NO_OBJECT;
    d.num_elements = 4;
    d.datatypes = test_types;
    d.element_names = test_names;
    d.source = fake_source;
    cnt_event_t *ev = new_event();

    cnt_event_desc_t bad = d;
    bad.name = "";
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    bad = d;
    bad.verbosity = 0;
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    bad = d;
    bad.bind = IBMSG_T_BIND_LAST;
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    bad = d;
    bad.num_elements = CNT_EVENT_MAX_ELEMENTS + 1;
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    bad = d;
    bad.source = CNT_EVENT_MAX_SOURCES;
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    const ibmsg_t_datatype_t unknown[] = {IBMSG_T_INT, (ibmsg_t_datatype_t)99, IBMSG_T_INT,
                                          IBMSG_T_INT};
    bad = d;
    bad.datatypes = unknown;
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    const char *const unnamed[] = {"a", "", "c", "d"};
    bad = d;
    bad.element_names = unnamed;
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_ERR_INVALID);
    const ibmsg_t_datatype_t big[] = {IBMSG_T_DOUBLE, IBMSG_T_DOUBLE, IBMSG_T_DOUBLE,
                                      IBMSG_T_DOUBLE, IBMSG_T_DOUBLE, IBMSG_T_DOUBLE,
                                      IBMSG_T_DOUBLE, IBMSG_T_DOUBLE};
    const char *const eight[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    bad = d;
    bad.num_elements = 8; /* 64 bytes: the limit itself is fine */
    bad.datatypes = big;
    bad.element_names = eight;
    std::string fits = tool_unique("fits");
    bad.name = fits.c_str();
    EXPECT_EQ(cnt_event_register(&bad, new_event()), IBMSG_OK);
    bad = d;
    bad.category = "no_such_category";
    EXPECT_EQ(cnt_event_register(&bad, ev), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(cnt_event_register(nullptr, ev), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_event_register(&d, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ev->index, -1);

    ASSERT_EQ(cnt_event_register(&d, ev), IBMSG_OK);
    int index = ev->index;
    EXPECT_GE(index, 0);
    /* The same type again (a second context): the same index. */
    EXPECT_EQ(cnt_event_register(&d, ev), IBMSG_OK);
    EXPECT_EQ(ev->index, index);
    /* The same name described otherwise, or through another raise object: refused. */
    cnt_event_desc_t other = d;
    other.desc = "another";
    EXPECT_EQ(cnt_event_register(&other, ev), IBMSG_ERR_EXISTS);
    EXPECT_EQ(cnt_event_register(&d, new_event()), IBMSG_ERR_EXISTS);
    /* One raise object names one type. */
    std::string second = tool_unique("second");
    other = d;
    other.name = second.c_str();
    EXPECT_EQ(cnt_event_register(&other, ev), IBMSG_ERR_EXISTS);
    int n = -1;
    ASSERT_EQ(ibmsg_t_event_get_num(&n), IBMSG_T_SUCCESS);
    EXPECT_EQ(n, index + 1); /* the last: nothing was added after it */
}

/* ---- Sources ------------------------------------------------------------------------------- */

TEST_F(ToolEvent, SourceZeroIsMonotonic)
{
    int n = -1;
    ASSERT_EQ(ibmsg_t_source_get_num(&n), IBMSG_T_SUCCESS);
    EXPECT_GE(n, 2); /* ibmsg_monotonic and the fake clock */
    EXPECT_EQ(ibmsg_t_source_get_num(nullptr), IBMSG_T_ERR_INVALID);

    char name[64], desc[64];
    int nl = sizeof(name), dl = sizeof(desc);
    ibmsg_t_source_order_t order;
    long long tps = 0, max = 0;
    ibmsg_info_t info = IBMSG_INFO_NULL;
    ASSERT_EQ(ibmsg_t_source_get_info(0, name, &nl, desc, &dl, &order, &tps, &max, &info),
              IBMSG_T_SUCCESS);
    EXPECT_STREQ(name, "ibmsg_monotonic");
    EXPECT_EQ(nl, 16);
    EXPECT_STREQ(desc, "CLOCK_MONOTONIC in nanoseconds");
    EXPECT_EQ(order, IBMSG_T_SOURCE_ORDERED);
    EXPECT_EQ(tps, 1000000000LL);
    EXPECT_EQ(max, LLONG_MAX);
    int nkeys = -1;
    ASSERT_EQ(ibmsg_info_get_nkeys(info, &nkeys), IBMSG_OK);
    EXPECT_EQ(nkeys, 0);
    EXPECT_EQ(ibmsg_info_free(&info), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_source_get_info(n, nullptr, &nl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_source_get_info(-1, nullptr, &nl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr),
              IBMSG_T_ERR_INVALID_INDEX);

    long long t1 = 0, t2 = 0;
    ASSERT_EQ(ibmsg_t_source_get_timestamp(0, &t1), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_source_get_timestamp(0, &t2), IBMSG_T_SUCCESS);
    EXPECT_GT(t1, 0);
    EXPECT_GE(t2, t1);
    EXPECT_EQ(ibmsg_t_source_get_timestamp(n, &t1), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_source_get_timestamp(0, nullptr), IBMSG_T_ERR_INVALID);

    /* A registered source reads its own clock. */
    long long f1 = 0, f2 = 0;
    ASSERT_EQ(ibmsg_t_source_get_timestamp(fake_source, &f1), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_source_get_timestamp(fake_source, &f2), IBMSG_T_SUCCESS);
    EXPECT_EQ(f2, f1 + 1);
    ASSERT_EQ(ibmsg_t_source_get_info(fake_source, name, &nl, nullptr, nullptr, &order, &tps, &max,
                                      nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_STREQ(name, "test_fake_clock");
    EXPECT_EQ(tps, 1000);
}

TEST_F(ToolEvent, SourcesAreUniqueAndBounded)
{
    cnt_source_desc_t d = {};
    d.name = "test_fake_clock";
    d.desc = "a clock that counts its readings";
    d.ordering = IBMSG_T_SOURCE_ORDERED;
    d.ticks_per_second = 1000;
    d.max_ticks = LLONG_MAX;
    d.clock = fake_clock;
    int index = -1;
    ASSERT_EQ(cnt_source_register(&d, &index), IBMSG_OK);
    EXPECT_EQ(index, fake_source);
    cnt_source_desc_t other = d;
    other.ticks_per_second = 1;
    EXPECT_EQ(cnt_source_register(&other, &index), IBMSG_ERR_EXISTS);
    other = d;
    other.clock = nullptr;
    EXPECT_EQ(cnt_source_register(&other, &index), IBMSG_ERR_INVALID);
    other = d;
    other.ordering = (ibmsg_t_source_order_t)7;
    EXPECT_EQ(cnt_source_register(&other, &index), IBMSG_ERR_INVALID);
    other = d;
    other.ticks_per_second = 0;
    EXPECT_EQ(cnt_source_register(&other, &index), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_source_register(nullptr, &index), IBMSG_ERR_INVALID);

    /* Fill the table (the same names on every run: sources are never removed). */
    int ret = IBMSG_OK, n = 0;
    for (int i = 0; ret == IBMSG_OK && i < CNT_EVENT_MAX_SOURCES; i++) {
        std::string name = "test_fill_source_" + std::to_string(i);
        other = d;
        other.name = name.c_str();
        ret = cnt_source_register(&other, &index);
    }
    EXPECT_EQ(ret, IBMSG_ERR_NO_RESOURCE);
    ASSERT_EQ(ibmsg_t_source_get_num(&n), IBMSG_T_SUCCESS);
    EXPECT_EQ(n, CNT_EVENT_MAX_SOURCES);
    /* A known name still gives its index. */
    ASSERT_EQ(cnt_source_register(&d, &index), IBMSG_OK);
    EXPECT_EQ(index, fake_source);
}

/* ---- Errors -------------------------------------------------------------------------------- */

TEST_F(ToolEvent, EveryHandleIsChecked)
{
    int index = -1;
    cnt_event_t *ev = add_event("ev", IBMSG_T_BIND_NO_OBJECT, nullptr, &index);
    ibmsg_t_event_registration_t reg = IBMSG_T_EVENT_REGISTRATION_NULL;
    EXPECT_EQ(ibmsg_t_event_handle_alloc(-1, nullptr, IBMSG_INFO_NULL, &reg),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(index + 1000000, nullptr, IBMSG_INFO_NULL, &reg),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, nullptr),
              IBMSG_T_ERR_INVALID);
    /* Not an info object. */
    alignas(16) unsigned char junk[64] = {0};
    ibmsg_info_t bad_info = reinterpret_cast<ibmsg_info_t>(junk);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, bad_info, &reg), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(reg, IBMSG_T_EVENT_REGISTRATION_NULL);
    ibmsg_info_t hints = IBMSG_INFO_NULL;
    ASSERT_EQ(ibmsg_info_create(&hints), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_string(hints, "some_hint", "ignored"), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, hints, &reg), IBMSG_T_SUCCESS);
    EXPECT_EQ(ev->listeners, 1);

    /* The get_info calls give a new, empty info: ibmsg uses no hints. */
    ibmsg_info_t used = IBMSG_INFO_NULL;
    int nkeys = -1;
    ASSERT_EQ(ibmsg_t_event_handle_get_info(reg, &used), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_info_get_nkeys(used, &nkeys), IBMSG_OK);
    EXPECT_EQ(nkeys, 0);
    EXPECT_EQ(ibmsg_info_free(&used), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_event_callback_get_info(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &used),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_info_get_nkeys(used, &nkeys), IBMSG_OK);
    EXPECT_EQ(nkeys, 0);
    EXPECT_EQ(ibmsg_info_free(&used), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_event_handle_set_info(reg, hints), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_callback_set_info(reg, IBMSG_T_CB_REQUIRE_NONE, hints),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_info_free(&hints), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_event_handle_get_info(reg, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_callback_get_info(reg, IBMSG_T_CB_REQUIRE_NONE, nullptr),
              IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_handle_set_info(reg, bad_info), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_callback_set_info(reg, IBMSG_T_CB_REQUIRE_NONE, bad_info),
              IBMSG_T_ERR_INVALID);
    EXPECT_EQ(on(reg, IBMSG_T_CB_REQUIRE_NONE, nullptr, log_cb), IBMSG_T_SUCCESS);
    EXPECT_EQ(
        ibmsg_t_event_register_callback(reg, IBMSG_T_CB_REQUIRE_NONE, bad_info, nullptr, log_cb),
        IBMSG_T_ERR_INVALID);

    /* cb_safety out of range, in every call that takes one. */
    for (int level : {-1, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE + 1}) {
        auto l = (ibmsg_t_cb_safety_t)level;
        EXPECT_EQ(on(reg, l, nullptr), IBMSG_T_ERR_INVALID) << level;
        EXPECT_EQ(ibmsg_t_event_callback_set_info(reg, l, IBMSG_INFO_NULL), IBMSG_T_ERR_INVALID);
        EXPECT_EQ(ibmsg_t_event_callback_get_info(reg, l, &used), IBMSG_T_ERR_INVALID);
    }

    /* NULL, forged, of another kind, and freed (stale) handles. */
    ibmsg_t_event_registration_t stale = reg;
    Freed freed;
    ASSERT_EQ(ibmsg_t_event_handle_free(reg, &freed, free_cb), IBMSG_T_SUCCESS);
    EXPECT_EQ(freed.calls, 1);
    EXPECT_EQ(freed.reg, reg);
    EXPECT_EQ(freed.level, IBMSG_T_CB_REQUIRE_NONE); /* called by the free itself */
    EXPECT_EQ(ev->listeners, 0);
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&session), IBMSG_T_SUCCESS);
    for (auto h : {IBMSG_T_EVENT_REGISTRATION_NULL, stale,
                   (ibmsg_t_event_registration_t)(uintptr_t)0x4512345600000001ull,
                   (ibmsg_t_event_registration_t)(uintptr_t)session}) {
        EXPECT_EQ(on(h, IBMSG_T_CB_REQUIRE_NONE, nullptr), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_set_dropped_handler(h, log_dropped), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_handle_set_info(h, IBMSG_INFO_NULL), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_handle_get_info(h, &used), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_callback_set_info(h, IBMSG_T_CB_REQUIRE_NONE, IBMSG_INFO_NULL),
                  IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_callback_get_info(h, IBMSG_T_CB_REQUIRE_NONE, &used),
                  IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_handle_free(h, &freed, free_cb), IBMSG_T_ERR_INVALID_HANDLE);
    }
    EXPECT_EQ(freed.calls, 1);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&session), IBMSG_T_SUCCESS);

    /* Instances: only the one under delivery in this thread is valid. */
    long long ts;
    int src, el;
    char buf[64];
    auto junk_inst = (ibmsg_t_event_instance_t)(uintptr_t)0x4900000000000001ull;
    for (auto inst : {(ibmsg_t_event_instance_t) nullptr, junk_inst}) {
        EXPECT_EQ(ibmsg_t_event_read(inst, 0, &el), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_copy(inst, buf), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_get_timestamp(inst, &ts), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_get_source(inst, &src), IBMSG_T_ERR_INVALID_HANDLE);
    }
}

TEST_F(ToolEvent, OutOfHandles)
{
    int index = -1;
    add_event("ev", IBMSG_T_BIND_NO_OBJECT, nullptr, &index);
    ibmsg_t_event_registration_t a, b;
    cnt_tool_test_set_event_limit(1);
    ASSERT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, &a), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, &b),
              IBMSG_T_ERR_OUT_OF_HANDLES);
    cnt_tool_test_set_event_limit(0);
    EXPECT_EQ(ibmsg_t_event_handle_free(a, nullptr, nullptr), IBMSG_T_SUCCESS);
}

TEST_F(ToolEvent, NotInitialized)
{
    int index = -1;
    cnt_event_t *ev = add_event("ev", IBMSG_T_BIND_NO_OBJECT, nullptr, &index);
    ibmsg_t_event_registration_t reg = alloc(ev);
    ASSERT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    /* The last finalize freed the registration: nothing listens. */
    EXPECT_EQ(ev->listeners, 0);
    int n;
    long long ts;
    ibmsg_info_t info;
    char buf[64];
    EXPECT_EQ(ibmsg_t_event_get_num(&n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_get_info(index, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_get_index("x", &n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_get_element_name(index, 0, nullptr, &n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, &reg),
              IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_handle_set_info(reg, IBMSG_INFO_NULL), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_handle_get_info(reg, &info), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(on(reg, IBMSG_T_CB_REQUIRE_NONE, nullptr), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_callback_set_info(reg, IBMSG_T_CB_REQUIRE_NONE, IBMSG_INFO_NULL),
              IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_callback_get_info(reg, IBMSG_T_CB_REQUIRE_NONE, &info),
              IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_set_dropped_handler(reg, nullptr), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_read(nullptr, 0, buf), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_copy(nullptr, buf), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_get_timestamp(nullptr, &ts), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_event_get_source(nullptr, &n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_source_get_num(&n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_source_get_info(0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr, nullptr),
              IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_source_get_timestamp(0, &ts), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_category_get_num_events(0, &n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_category_get_events(0, 0, nullptr), IBMSG_T_ERR_NOT_INITIALIZED);
    int provided;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    /* The handle died with the last finalize. */
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_ERR_INVALID_HANDLE);
}

/* ---- Delivery ------------------------------------------------------------------------------ */

TEST_F(ToolEvent, ListenersCountRegistrations)
{
    cnt_event_t *ev = add_event("ev");
    EXPECT_FALSE(cnt_event_listening(ev));
    ibmsg_t_event_registration_t a = alloc(ev), b = alloc(ev);
    EXPECT_EQ(ev->listeners, 2);
    EXPECT_TRUE(cnt_event_listening(ev));
    EXPECT_EQ(ibmsg_t_event_handle_free(a, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(ev->listeners, 1);
    EXPECT_EQ(ibmsg_t_event_handle_free(b, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_FALSE(cnt_event_listening(ev));
}

TEST_F(ToolEvent, InstanceCarriesItsElementsTimestampAndSource)
{
    cnt_event_t *ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev), reg2 = alloc(ev);
    static ibmsg_t_event_instance_t saved;
    static TestElems read_back;
    static int read_rcs[6];
    auto reader = [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t r,
                     ibmsg_t_cb_safety_t l, void *ud) {
        saved = inst;
        read_rcs[0] = ibmsg_t_event_read(inst, 0, &read_back.cause);
        read_rcs[1] = ibmsg_t_event_read(inst, 1, &read_back.bytes);
        read_rcs[2] = ibmsg_t_event_read(inst, 2, &read_back.c);
        read_rcs[3] = ibmsg_t_event_read(inst, 3, &read_back.qpn);
        read_rcs[4] = ibmsg_t_event_read(inst, 4, &read_back.qpn);
        read_rcs[5] = ibmsg_t_event_read(inst, 0, nullptr);
        /* Another thread may not use it. */
        int other = 0;
        long long ts;
        std::thread t([&] { other = ibmsg_t_event_get_timestamp(inst, &ts); });
        t.join();
        EXPECT_EQ(other, IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_event_copy(inst, nullptr), IBMSG_T_ERR_INVALID);
        EXPECT_EQ(ibmsg_t_event_get_timestamp(inst, nullptr), IBMSG_T_ERR_INVALID);
        EXPECT_EQ(ibmsg_t_event_get_source(inst, nullptr), IBMSG_T_ERR_INVALID);
        log_cb(inst, r, l, ud);
    };
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_a, reader), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(reg2, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_b), IBMSG_T_SUCCESS);
    long long before = fake_now.load();
    raise(ev, 42);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(read_rcs[0], IBMSG_T_SUCCESS);
    EXPECT_EQ(read_rcs[1], IBMSG_T_SUCCESS);
    EXPECT_EQ(read_rcs[2], IBMSG_T_SUCCESS);
    EXPECT_EQ(read_rcs[3], IBMSG_T_SUCCESS);
    EXPECT_EQ(read_rcs[4], IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(read_rcs[5], IBMSG_T_ERR_INVALID);
    EXPECT_EQ(read_back.cause, 42);
    EXPECT_EQ(read_back.bytes, 1042ull);
    EXPECT_EQ(read_back.c, 'x');
    EXPECT_EQ(read_back.qpn, 7u);
    for (const Seen &s : seen) {
        /* One timestamp, taken when the event was raised: both registrations see it. */
        EXPECT_EQ(s.ts, before + 1);
        EXPECT_EQ(s.source, fake_source);
        EXPECT_EQ(s.elems.cause, 42);
        EXPECT_EQ(s.elems.bytes, 1042ull);
        EXPECT_EQ(s.elems.c, 'x');
        EXPECT_EQ(s.elems.qpn, 7u);
        EXPECT_EQ(s.level, IBMSG_T_CB_REQUIRE_THREAD_SAFE);
    }
    EXPECT_EQ(seen[0].reg, reg);
    EXPECT_EQ(seen[0].user_data, &ud_a);
    EXPECT_EQ(seen[1].reg, reg2);
    EXPECT_EQ(seen[1].user_data, &ud_b);
    /* The instance is gone with its callback. */
    TestElems e;
    EXPECT_EQ(ibmsg_t_event_copy(saved, &e), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg2, nullptr, nullptr), IBMSG_T_SUCCESS);
}

TEST_F(ToolEvent, LowestValidLevelIsCalled)
{
    cnt_event_t *ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev);

    /* Nothing registered: dropped. */
    raise(ev, 1, nullptr, IBMSG_T_CB_REQUIRE_NONE);
    EXPECT_TRUE(seen.empty());

    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_NONE, &ud_a), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_c), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &ud_d), IBMSG_T_SUCCESS);
    const struct {
        ibmsg_t_cb_safety_t required;
        int level;
        void *ud;
    } cases[] = {
        {IBMSG_T_CB_REQUIRE_NONE, IBMSG_T_CB_REQUIRE_NONE, &ud_a},
        {IBMSG_T_CB_REQUIRE_MPI_RESTRICTED, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_c},
        {IBMSG_T_CB_REQUIRE_THREAD_SAFE, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_c},
        {IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &ud_d},
    };
    for (const auto &c : cases) {
        seen.clear();
        raise(ev, 2, nullptr, c.required);
        ASSERT_EQ(seen.size(), 1u) << c.required;
        EXPECT_EQ(seen[0].level, c.level) << c.required;
        EXPECT_EQ(seen[0].user_data, c.ud) << c.required;
    }

    /* Registering again at a level replaces that level's callback and user_data. */
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_b, log_cb2), IBMSG_T_SUCCESS);
    seen.clear();
    raise(ev, 3);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].what, "cb2");
    EXPECT_EQ(seen[0].user_data, &ud_b);

    /* NULL removes it: the next level up takes over. */
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_b, nullptr), IBMSG_T_SUCCESS);
    seen.clear();
    raise(ev, 4);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].level, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE);
    EXPECT_EQ(seen[0].user_data, &ud_d);

    /* Only a level below what the context requires: dropped. */
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, nullptr, nullptr), IBMSG_T_SUCCESS);
    seen.clear();
    raise(ev, 5);
    EXPECT_TRUE(seen.empty());
    raise(ev, 6, nullptr, IBMSG_T_CB_REQUIRE_NONE);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].level, IBMSG_T_CB_REQUIRE_NONE);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}

TEST_F(ToolEvent, BoundRegistrationsSeeTheirObject)
{
    cnt_event_t *ev = add_event("ev", IBMSG_T_BIND_ENDPOINT);
    cnt_event_t *free_ev = add_event("free_ev", IBMSG_T_BIND_NO_OBJECT);
    int obj_a = 0, obj_b = 0;
    void *a = &obj_a, *b = &obj_b, *none = nullptr;
    ibmsg_t_event_registration_t ra = alloc(ev, &a), rall = alloc(ev, nullptr),
                                 rnull = alloc(ev, &none), rfree = alloc(free_ev, &a);
    ASSERT_EQ(on(ra, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_a), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(rall, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_b), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(rnull, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_c), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(rfree, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_d), IBMSG_T_SUCCESS);
    raise(ev, 1, b);
    ASSERT_EQ(seen.size(), 2u); /* the every-object registrations only */
    EXPECT_EQ(seen[0].user_data, &ud_b);
    EXPECT_EQ(seen[1].user_data, &ud_c);
    seen.clear();
    raise(ev, 2, a);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0].user_data, &ud_a);
    /* A type bound to no object ignores obj_handle. */
    seen.clear();
    raise(free_ev, 3);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].user_data, &ud_d);
    for (auto r : {ra, rall, rnull, rfree}) {
        EXPECT_EQ(ibmsg_t_event_handle_free(r, nullptr, nullptr), IBMSG_T_SUCCESS);
    }
}

TEST_F(ToolEvent, DropsAreToldBeforeTheNextInstance)
{
    cnt_event_t *ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev);
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_NONE, &ud_a), IBMSG_T_SUCCESS);
    /* Three drops before the handler is set do not count: it hears of those since it was set. */
    for (int i = 0; i < 3; i++) {
        raise(ev, i);
    }
    ASSERT_EQ(ibmsg_t_event_set_dropped_handler(reg, log_dropped), IBMSG_T_SUCCESS);
    raise(ev, 10);
    raise(ev, 11);
    EXPECT_TRUE(seen.empty());
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_c), IBMSG_T_SUCCESS);
    raise(ev, 12);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].what, "dropped");
    EXPECT_EQ(seen[0].count, 2);
    EXPECT_EQ(seen[0].reg, reg);
    EXPECT_EQ(seen[0].source, fake_source);
    EXPECT_EQ(seen[0].level, IBMSG_T_CB_REQUIRE_THREAD_SAFE); /* the callback's about to run */
    EXPECT_EQ(seen[0].user_data, &ud_c);
    EXPECT_EQ(seen[1].what, "cb");
    EXPECT_EQ(seen[1].elems.cause, 12);
    /* Told once: the next instance comes alone. */
    seen.clear();
    raise(ev, 13);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].what, "cb");

    /* The count saturates. */
    ASSERT_EQ(cnt_event_test_set_dropped(reg, fake_source, INT_MAX - 1), IBMSG_OK);
    raise(ev, 14, nullptr, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE); /* INT_MAX */
    raise(ev, 15, nullptr, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE); /* stays */
    seen.clear();
    raise(ev, 16);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].count, INT_MAX);

    /* Setting the handler again (or removing it) restarts the count. */
    raise(ev, 17, nullptr, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE);
    ASSERT_EQ(ibmsg_t_event_set_dropped_handler(reg, nullptr), IBMSG_T_SUCCESS);
    raise(ev, 18, nullptr, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE);
    ASSERT_EQ(ibmsg_t_event_set_dropped_handler(reg, log_dropped), IBMSG_T_SUCCESS);
    seen.clear();
    raise(ev, 19);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].what, "cb");
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}

TEST_F(ToolEvent, DropsNameTheirSource)
{
    cnt_event_t *on_fake = add_event("fake");
    std::string name = tool_unique("mono");
    cnt_event_desc_t d = {};
    d.name = name.c_str();
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.num_elements = 4;
    d.datatypes = test_types;
    d.element_names = test_names;
    d.source = 0;
    cnt_event_t *on_mono = new_event();
    ASSERT_EQ(cnt_event_register(&d, on_mono), IBMSG_OK);
    ibmsg_t_event_registration_t rf = alloc(on_fake), rm = alloc(on_mono);
    for (auto r : {rf, rm}) {
        ASSERT_EQ(ibmsg_t_event_set_dropped_handler(r, log_dropped), IBMSG_T_SUCCESS);
        ASSERT_EQ(on(r, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &ud_a), IBMSG_T_SUCCESS);
    }
    raise(on_fake, 1, nullptr, IBMSG_T_CB_REQUIRE_NONE); /* delivered: ASYNC is valid anywhere */
    ASSERT_EQ(on(rf, IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, nullptr, nullptr), IBMSG_T_SUCCESS);
    raise(on_fake, 2);
    raise(on_fake, 3);
    ASSERT_EQ(on(rf, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_b), IBMSG_T_SUCCESS);
    seen.clear();
    raise(on_mono, 4); /* another source: nothing of the fake clock's drops */
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].what, "cb");
    EXPECT_EQ(seen[0].source, 0);
    raise(on_fake, 5);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[1].what, "dropped");
    EXPECT_EQ(seen[1].count, 2);
    EXPECT_EQ(seen[1].source, fake_source);
    EXPECT_EQ(seen[1].user_data, &ud_b);
    EXPECT_EQ(ibmsg_t_event_handle_free(rf, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_handle_free(rm, nullptr, nullptr), IBMSG_T_SUCCESS);
}

TEST_F(ToolEvent, RaisedInACallbackComesAfterIt)
{
    static cnt_event_t *ev;
    ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev);
    auto nested = [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t r,
                     ibmsg_t_cb_safety_t l, void *ud) {
        log_cb(inst, r, l, ud);
        if (seen_log->back().elems.cause == 1) {
            raise(ev, 2);
            EXPECT_EQ(seen_log->size(), 1u); /* queued, not nested */
        }
    };
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, nullptr, nested), IBMSG_T_SUCCESS);
    raise(ev, 1);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].elems.cause, 1);
    EXPECT_EQ(seen[1].elems.cause, 2);
    EXPECT_LT(seen[0].ts, seen[1].ts);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}

/* While one thread delivers, other threads' instances queue in order; a full ring drops. */
TEST_F(ToolEvent, BusySourceQueuesInOrderAndDropsWhenFull)
{
    static std::mutex m;
    static std::condition_variable cv;
    static bool in_cb, release;
    static cnt_event_t *ev;
    in_cb = release = false;
    ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev);
    auto blocking = [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t r,
                       ibmsg_t_cb_safety_t l, void *ud) {
        log_cb(inst, r, l, ud);
        if (seen_log->back().elems.cause == -1) {
            std::unique_lock<std::mutex> lk(m);
            in_cb = true;
            cv.notify_all();
            cv.wait(lk, [] { return release; });
        }
    };
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_a, blocking), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_event_set_dropped_handler(reg, log_dropped), IBMSG_T_SUCCESS);
    std::thread deliverer([] { raise(ev, -1); });
    {
        std::unique_lock<std::mutex> lk(m);
        cv.wait(lk, [] { return in_cb; });
    }
    /* This thread's instances cannot be delivered now: they queue (the raise returns). */
    for (int i = 0; i < CNT_EVENT_RING + 3; i++) {
        raise(ev, i);
    }
    {
        std::lock_guard<std::mutex> lk(m);
        EXPECT_EQ(seen.size(), 1u);
        release = true;
        cv.notify_all();
    }
    deliverer.join();
    /* The deliverer's own, then the drops told, then the queued ones in timestamp order. */
    ASSERT_EQ(seen.size(), 2u + CNT_EVENT_RING);
    EXPECT_EQ(seen[0].elems.cause, -1);
    EXPECT_EQ(seen[1].what, "dropped");
    EXPECT_EQ(seen[1].count, 3);
    EXPECT_GT(seen[2].ts, seen[0].ts);
    for (int i = 0; i < CNT_EVENT_RING; i++) {
        EXPECT_EQ(seen[2 + i].elems.cause, i);
        if (i > 0) {
            EXPECT_GT(seen[2 + i].ts, seen[1 + i].ts);
        }
    }
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}

TEST_F(ToolEvent, CallbacksRunWithoutTheRegistryLock)
{
    static cnt_event_t *ev;
    static int index;
    ev = add_event("ev", IBMSG_T_BIND_NO_OBJECT, nullptr, &index);
    ibmsg_t_event_registration_t reg = alloc(ev);
    static int other_rc;
    auto other_thread = [](ibmsg_t_event_instance_t, ibmsg_t_event_registration_t,
                           ibmsg_t_cb_safety_t, void *) {
        /* Would wait forever if the raise held the registry's lock. */
        std::thread t([] {
            ibmsg_t_event_registration_t r2;
            other_rc = ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, &r2);
            if (other_rc == IBMSG_T_SUCCESS) {
                other_rc = ibmsg_t_event_handle_free(r2, nullptr, nullptr);
            }
        });
        t.join();
    };
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, nullptr, other_thread), IBMSG_T_SUCCESS);
    other_rc = -1;
    raise(ev, 1);
    EXPECT_EQ(other_rc, IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}

/* ---- Freeing ------------------------------------------------------------------------------- */

TEST_F(ToolEvent, FreeFromItsOwnCallback)
{
    static cnt_event_t *ev;
    static Freed freed;
    static int freed_calls_inside;
    static int free_rc;
    freed = Freed();
    ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev);
    auto self_free = [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t r,
                        ibmsg_t_cb_safety_t l, void *ud) {
        log_cb(inst, r, l, ud);
        free_rc = ibmsg_t_event_handle_free(r, &freed, free_cb);
        freed_calls_inside = freed.calls; /* not yet: this callback is under way */
        /* The instance is still valid until the callback returns. */
        TestElems e;
        EXPECT_EQ(ibmsg_t_event_copy(inst, &e), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_event_handle_free(r, nullptr, nullptr), IBMSG_T_ERR_INVALID_HANDLE);
    };
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, nullptr, self_free), IBMSG_T_SUCCESS);
    raise(ev, 1);
    EXPECT_EQ(free_rc, IBMSG_T_SUCCESS);
    EXPECT_EQ(freed_calls_inside, 0);
    EXPECT_EQ(freed.calls, 1);
    EXPECT_EQ(freed.reg, reg);
    EXPECT_EQ(freed.level, IBMSG_T_CB_REQUIRE_MPI_RESTRICTED); /* the raising context's */
    EXPECT_EQ(ev->listeners, 0);
    raise(ev, 2);
    EXPECT_EQ(seen.size(), 1u);
    EXPECT_EQ(freed.calls, 1);
}

TEST_F(ToolEvent, FreeAnotherFromACallback)
{
    static cnt_event_t *ev, *ev2;
    static Freed freed2, freed_b;
    static ibmsg_t_event_registration_t other, later;
    freed2 = freed_b = Freed();
    ev = add_event("ev");
    ev2 = add_event("ev2");
    ibmsg_t_event_registration_t reg = alloc(ev);
    other = alloc(ev2); /* of another type: not in flight, freed at once */
    later = alloc(ev);  /* of this type, picked for this instance: must not start */
    auto frees = [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t r,
                    ibmsg_t_cb_safety_t l, void *ud) {
        log_cb(inst, r, l, ud);
        EXPECT_EQ(ibmsg_t_event_handle_free(other, &freed2, free_cb), IBMSG_T_SUCCESS);
        EXPECT_EQ(freed2.calls, 1);
        EXPECT_EQ(freed2.level, IBMSG_T_CB_REQUIRE_MPI_RESTRICTED); /* in this callback */
        EXPECT_EQ(ibmsg_t_event_handle_free(later, &freed_b, free_cb), IBMSG_T_SUCCESS);
        EXPECT_EQ(freed_b.calls, 0); /* in flight for this instance */
    };
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, nullptr, frees), IBMSG_T_SUCCESS);
    ASSERT_EQ(on(later, IBMSG_T_CB_REQUIRE_THREAD_SAFE, &ud_b), IBMSG_T_SUCCESS);
    raise(ev, 1);
    ASSERT_EQ(seen.size(), 1u); /* later's callback did not start */
    EXPECT_EQ(freed_b.calls, 1);
    EXPECT_EQ(freed_b.reg, later);
    EXPECT_EQ(ev->listeners, 1);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}

/* ---- Threads ------------------------------------------------------------------------------- */

TEST_F(ToolEvent, ConcurrentRegistrationAndRaising)
{
    static cnt_event_t *ev;
    static std::atomic<long> delivered, told;
    delivered = 0;
    told = 0;
    ev = add_event("ev");
    ibmsg_t_event_registration_t steady = alloc(ev);
    auto counting = [](ibmsg_t_event_instance_t, ibmsg_t_event_registration_t, ibmsg_t_cb_safety_t,
                       void *) { delivered++; };
    auto drops = [](int count, ibmsg_t_event_registration_t, int, ibmsg_t_cb_safety_t, void *) {
        told += count;
    };
    ASSERT_EQ(on(steady, IBMSG_T_CB_REQUIRE_THREAD_SAFE, nullptr, counting), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_event_set_dropped_handler(steady, drops), IBMSG_T_SUCCESS);

    const int raisers = 3, per_raiser = 4000, churners = 2, per_churner = 300;
    std::atomic<int> free_cbs{0}, errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < raisers; t++) {
        threads.emplace_back([] {
            for (int i = 0; i < per_raiser; i++) {
                raise(ev, i);
            }
        });
    }
    for (int t = 0; t < churners; t++) {
        threads.emplace_back([&] {
            auto fcb = [](ibmsg_t_event_registration_t, ibmsg_t_cb_safety_t, void *ud) {
                (*static_cast<std::atomic<int> *>(ud))++;
            };
            for (int i = 0; i < per_churner; i++) {
                ibmsg_t_event_registration_t r;
                if (ibmsg_t_event_handle_alloc(ev->index, nullptr, IBMSG_INFO_NULL, &r) !=
                        IBMSG_T_SUCCESS ||
                    ibmsg_t_event_register_callback(
                        r, IBMSG_T_CB_REQUIRE_THREAD_SAFE, IBMSG_INFO_NULL, nullptr,
                        [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
                           ibmsg_t_cb_safety_t, void *) {
                            TestElems e;
                            (void)ibmsg_t_event_copy(inst, &e);
                        }) != IBMSG_T_SUCCESS ||
                    ibmsg_t_event_handle_free(r, &free_cbs, fcb) != IBMSG_T_SUCCESS) {
                    errors++;
                }
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(free_cbs.load(), churners * per_churner); /* every free callback, once */
    raise(ev, -1);                                      /* tells the drops still pending */
    EXPECT_EQ(delivered.load() + told.load(), raisers * per_raiser + 1L);
    EXPECT_EQ(ibmsg_t_event_handle_free(steady, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(ev->listeners, 0);
}

TEST_F(ToolEvent, DeliveryCounters)
{
    cnt_event_t *ev = add_event("ev");
    ibmsg_t_event_registration_t reg = alloc(ev);
    int di = -1, dr = -1, count;
    ASSERT_EQ(ibmsg_t_pvar_get_index("tool_events_delivered", IBMSG_T_PVAR_CLASS_COUNTER, &di),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_get_index("tool_events_dropped", IBMSG_T_PVAR_CLASS_COUNTER, &dr),
              IBMSG_T_SUCCESS);
    ibmsg_t_pvar_session_t s;
    ibmsg_t_pvar_handle_t hd, hr;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, di, nullptr, &hd, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, dr, nullptr, &hr, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    raise(ev, 1); /* no callback: a drop */
    ASSERT_EQ(on(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, nullptr), IBMSG_T_SUCCESS);
    raise(ev, 2);
    raise(ev, 3);
    unsigned long long nd = 0, nr = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, hd, &nd), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_read(s, hr, &nr), IBMSG_T_SUCCESS);
    EXPECT_EQ(nd, 2ull);
    EXPECT_EQ(nr, 1ull);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
}
