/* Sessions and handles: the arithmetic of every class, state rules, lists, notify, binding. */
#include "tool_fixture.h"

#include "counters/registry/tool_internal.h"

#include <climits>
#include <cstring>
#include <string>
#include <vector>

class ToolSession : public ToolTest
{
  public:
    void SetUp() override
    {
        ToolTest::SetUp();
        ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    }
    void TearDown() override
    {
        if (s != IBMSG_T_PVAR_SESSION_NULL) {
            EXPECT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
        }
        ToolTest::TearDown();
    }
    ibmsg_t_pvar_handle_t alloc(int index, int expect_count = 1, void *obj_handle = nullptr)
    {
        ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
        int count = -1;
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, index, obj_handle, &h, &count), IBMSG_T_SUCCESS);
        EXPECT_EQ(count, expect_count);
        return h;
    }
    template <typename T> T read(ibmsg_t_pvar_handle_t h)
    {
        T v{};
        EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
        return v;
    }
    ibmsg_t_pvar_session_t s = IBMSG_T_PVAR_SESSION_NULL;
};

TEST_F(ToolSession, CounterAccumulatesOnlyWhileStarted)
{
    unsigned long long src = 5;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_handle_t h = alloc(p);

    EXPECT_EQ(read<unsigned long long>(h), 0u);
    src += 7; /* not started: nothing counts */
    EXPECT_EQ(read<unsigned long long>(h), 0u);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    EXPECT_TRUE(cnt_pvar_is_started(p));
    src += 10;
    EXPECT_EQ(read<unsigned long long>(h), 10u);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, h), IBMSG_T_SUCCESS);
    EXPECT_FALSE(cnt_pvar_is_started(p));
    src += 100; /* a stopped counter does not move */
    EXPECT_EQ(read<unsigned long long>(h), 10u);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS); /* starting twice changes nothing */
    src += 1;
    EXPECT_EQ(read<unsigned long long>(h), 11u);
    ASSERT_EQ(ibmsg_t_pvar_reset(s, h), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<unsigned long long>(h), 0u);
    src += 2;
    EXPECT_EQ(read<unsigned long long>(h), 2u);
    unsigned long long w = 50;
    ASSERT_EQ(ibmsg_t_pvar_write(s, h, &w), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<unsigned long long>(h), 50u);
    src += 3;
    EXPECT_EQ(read<unsigned long long>(h), 53u);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, h), IBMSG_T_SUCCESS);
    src += 3;
    EXPECT_EQ(read<unsigned long long>(h), 53u);
    ASSERT_EQ(ibmsg_t_pvar_reset(s, h), IBMSG_T_SUCCESS); /* stopped: back to 0, stays there */
    src += 3;
    EXPECT_EQ(read<unsigned long long>(h), 0u);
}

TEST_F(ToolSession, SessionsAreIndependent)
{
    unsigned long long src = 0;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_session_t s2;
    ibmsg_t_pvar_handle_t h2, h = alloc(p);
    int count;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s2), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s2, p, nullptr, &h2, &count), IBMSG_T_SUCCESS);

    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    src += 4;
    ASSERT_EQ(ibmsg_t_pvar_start(s2, h2), IBMSG_T_SUCCESS);
    src += 6;
    unsigned long long v2 = 0;
    EXPECT_EQ(read<unsigned long long>(h), 10u);
    ASSERT_EQ(ibmsg_t_pvar_read(s2, h2, &v2), IBMSG_T_SUCCESS);
    EXPECT_EQ(v2, 6u);

    /* A handle read through a session it does not belong to is invalid. */
    EXPECT_EQ(ibmsg_t_pvar_read(s2, h, &v2), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_start(s2, h), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_handle_free(s2, &h), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&s2), IBMSG_T_SUCCESS);
    EXPECT_EQ(s2, IBMSG_T_PVAR_SESSION_NULL);
    EXPECT_EQ(read<unsigned long long>(h), 10u);
}

template <typename T> static void counter_wraps(ToolSession *t, ibmsg_t_datatype_t dt)
{
    T src = (T)-3; /* three below the wrap */
    int p = t->add_pvar((std::string("wrap") + std::to_string(dt)).c_str(),
                        IBMSG_T_PVAR_CLASS_COUNTER, dt, &src);
    ibmsg_t_pvar_handle_t h;
    int count;
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(t->s, p, nullptr, &h, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(t->s, h), IBMSG_T_SUCCESS);
    src += 10; /* wraps to 7 */
    T v = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(t->s, h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, (T)10);
}

TEST_F(ToolSession, UnsignedCountersGiveExactDeltasAcrossWrap)
{
    counter_wraps<unsigned>(this, IBMSG_T_UNSIGNED);
    counter_wraps<unsigned long>(this, IBMSG_T_UNSIGNED_LONG);
    counter_wraps<unsigned long long>(this, IBMSG_T_UNSIGNED_LONG_LONG);
}

TEST_F(ToolSession, AggregateAndTimerOfSignedAndDoubleTypes)
{
    int isrc = 10;
    long long csrc = -100;
    double dsrc = 1.5;
    int pi = add_pvar("i", IBMSG_T_PVAR_CLASS_AGGREGATE, IBMSG_T_INT, &isrc);
    int pc = add_pvar("c", IBMSG_T_PVAR_CLASS_AGGREGATE, IBMSG_T_COUNT, &csrc);
    int pd = add_pvar("d", IBMSG_T_PVAR_CLASS_TIMER, IBMSG_T_DOUBLE, &dsrc);
    ibmsg_t_pvar_handle_t hi = alloc(pi), hc = alloc(pc), hd = alloc(pd);

    ASSERT_EQ(ibmsg_t_pvar_start(s, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    isrc -= 25; /* aggregates may go down */
    csrc -= 50;
    dsrc += 0.25;
    EXPECT_EQ(read<int>(hi), -25);
    EXPECT_EQ(read<long long>(hc), -50);
    EXPECT_DOUBLE_EQ(read<double>(hd), 0.25);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    dsrc += 100.0;
    EXPECT_DOUBLE_EQ(read<double>(hd), 0.25);
    double w = 2.0;
    ASSERT_EQ(ibmsg_t_pvar_write(s, hd, &w), IBMSG_T_SUCCESS);
    EXPECT_DOUBLE_EQ(read<double>(hd), 2.0);
    ASSERT_EQ(ibmsg_t_pvar_start(s, hd), IBMSG_T_SUCCESS);
    dsrc += 1.0;
    EXPECT_DOUBLE_EQ(read<double>(hd), 3.0);
}

/* A source of three elements for whatever object it is bound to. */
struct array_source {
    unsigned long long v[3];
    int binds, frees, starts, stops;
    std::vector<int> events;
};

static int array_read(void *obj, int count, void *buf, void *ctx)
{
    (void)obj;
    array_source *a = static_cast<array_source *>(ctx);
    std::memcpy(buf, a->v, sizeof(unsigned long long) * (size_t)count);
    return IBMSG_OK;
}

static int array_notify(cnt_notify_event_t ev, void *obj, int *count, void *ctx)
{
    (void)obj;
    array_source *a = static_cast<array_source *>(ctx);
    a->events.push_back(ev);
    if (ev == CNT_NOTIFY_BIND) {
        *count = 3;
    }
    return IBMSG_OK;
}

TEST_F(ToolSession, CountFromNotifyGivesPerElementArithmetic)
{
    array_source src = {{1, 2, 3}, 0, 0, 0, 0, {}};
    std::string name = tool_unique("arr");
    cnt_pvar_desc_t d = {};
    d.name = name.c_str();
    d.var_class = IBMSG_T_PVAR_CLASS_COUNTER;
    d.datatype = IBMSG_T_UNSIGNED_LONG_LONG;
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.read = array_read;
    d.notify = array_notify;
    d.ctx = &src;
    int p;
    ASSERT_EQ(cnt_pvar_register(&d, &p), IBMSG_OK);

    ibmsg_t_pvar_handle_t h = alloc(p, 3);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    src.v[0] += 1;
    src.v[1] += 20;
    src.v[2] += 300;
    unsigned long long out[3] = {9, 9, 9};
    ASSERT_EQ(ibmsg_t_pvar_read(s, h, out), IBMSG_T_SUCCESS);
    EXPECT_EQ(out[0], 1u);
    EXPECT_EQ(out[1], 20u);
    EXPECT_EQ(out[2], 300u);
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &h), IBMSG_T_SUCCESS); /* started: STOP, then FREE */
    EXPECT_EQ(h, IBMSG_T_PVAR_HANDLE_NULL);
    std::vector<int> want = {CNT_NOTIFY_BIND, CNT_NOTIFY_START, CNT_NOTIFY_STOP, CNT_NOTIFY_FREE};
    EXPECT_EQ(src.events, want);
}

TEST_F(ToolSession, LevelReadsCurrentWhileStartedAndFrozenWhenStopped)
{
    unsigned long long lvl = 7;
    int p = add_pvar("l", IBMSG_T_PVAR_CLASS_LEVEL, IBMSG_T_UNSIGNED_LONG_LONG, &lvl);
    ibmsg_t_pvar_handle_t h = alloc(p);
    lvl = 9;
    EXPECT_EQ(read<unsigned long long>(h), 7u); /* before any start: the value at allocation */
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<unsigned long long>(h), 9u);
    lvl = 4;
    EXPECT_EQ(read<unsigned long long>(h), 4u);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, h), IBMSG_T_SUCCESS);
    lvl = 40;
    EXPECT_EQ(read<unsigned long long>(h), 4u);
    ASSERT_EQ(ibmsg_t_pvar_reset(s, h), IBMSG_T_SUCCESS); /* the starting value: current */
    EXPECT_EQ(read<unsigned long long>(h), 40u);
    unsigned long long w = 3; /* default source: the write goes through the context pointer */
    ASSERT_EQ(ibmsg_t_pvar_write(s, h, &w), IBMSG_T_SUCCESS);
    EXPECT_EQ(lvl, 3u);
    EXPECT_EQ(read<unsigned long long>(h), 3u);
}

TEST_F(ToolSession, PercentageStateAndCharVariables)
{
    double pct = 0.5;
    int state = 2;
    char text[8] = "idle";
    int pp = add_pvar("pct", IBMSG_T_PVAR_CLASS_PERCENTAGE, IBMSG_T_DOUBLE, &pct,
                      CNT_PVAR_CONTINUOUS | CNT_PVAR_READONLY);
    int ps = add_pvar("state", IBMSG_T_PVAR_CLASS_STATE, IBMSG_T_INT, &state, CNT_PVAR_CONTINUOUS);
    ibmsg_t_pvar_handle_t hp = alloc(pp), hs = alloc(ps);
    pct = 0.75;
    state = 3;
    EXPECT_DOUBLE_EQ(read<double>(hp), 0.75);
    EXPECT_EQ(read<int>(hs), 3);

    /* A char variable is a string of count bytes, read as is. */
    std::string name = tool_unique("text");
    cnt_pvar_desc_t d = {};
    d.name = name.c_str();
    d.var_class = IBMSG_T_PVAR_CLASS_GENERIC;
    d.datatype = IBMSG_T_CHAR;
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.flags = CNT_PVAR_CONTINUOUS;
    d.read = [](void *, int count, void *buf, void *ctx) {
        std::memcpy(buf, ctx, (size_t)count);
        return (int)IBMSG_OK;
    };
    d.notify = [](cnt_notify_event_t ev, void *, int *count, void *) {
        if (ev == CNT_NOTIFY_BIND) {
            *count = 8;
        }
        return (int)IBMSG_OK;
    };
    d.ctx = text;
    int pt;
    ASSERT_EQ(cnt_pvar_register(&d, &pt), IBMSG_OK);
    ibmsg_t_pvar_handle_t ht = alloc(pt, 8);
    std::strcpy(text, "busy");
    char out[8] = {};
    ASSERT_EQ(ibmsg_t_pvar_read(s, ht, out), IBMSG_T_SUCCESS);
    EXPECT_STREQ(out, "busy");
}

TEST_F(ToolSession, WatermarksTrackWhatReadsSee)
{
    long long lvl = 10;
    int ph = add_pvar("hwm", IBMSG_T_PVAR_CLASS_HIGHWATERMARK, IBMSG_T_COUNT, &lvl);
    int pl = add_pvar("lwm", IBMSG_T_PVAR_CLASS_LOWWATERMARK, IBMSG_T_COUNT, &lvl);
    ibmsg_t_pvar_handle_t hh = alloc(ph), hl = alloc(pl);

    lvl = 50;
    EXPECT_EQ(read<long long>(hh), 10); /* not started: the value at allocation */
    lvl = 20;
    ibmsg_t_pvar_handle_t both[2] = {hh, hl};
    ASSERT_EQ(ibmsg_t_pvar_start_list(s, 2, both), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<long long>(hh), 20); /* starts from the current level */
    EXPECT_EQ(read<long long>(hl), 20);
    lvl = 30;
    EXPECT_EQ(read<long long>(hh), 30);
    EXPECT_EQ(read<long long>(hl), 20);
    lvl = -5;
    EXPECT_EQ(read<long long>(hh), 30);
    EXPECT_EQ(read<long long>(hl), -5);
    lvl = 12;
    ASSERT_EQ(ibmsg_t_pvar_stop_list(s, 2, both), IBMSG_T_SUCCESS);
    lvl = 1000;
    EXPECT_EQ(read<long long>(hh), 30);
    EXPECT_EQ(read<long long>(hl), -5);
    ASSERT_EQ(ibmsg_t_pvar_start(s, hh), IBMSG_T_SUCCESS); /* a restart keeps the max so far */
    EXPECT_EQ(read<long long>(hh), 1000);
    lvl = 0;
    ASSERT_EQ(ibmsg_t_pvar_reset(s, hh), IBMSG_T_SUCCESS); /* back to the current level */
    EXPECT_EQ(read<long long>(hh), 0);
    long long w = 77;
    ASSERT_EQ(ibmsg_t_pvar_write(s, hh, &w), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<long long>(hh), 77);
}

TEST_F(ToolSession, ContinuousReadonlyAndAtomicRules)
{
    unsigned long long src = 3;
    int pc = add_pvar("cont", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src,
                      CNT_PVAR_CONTINUOUS);
    int pr = add_pvar("ro", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src,
                      CNT_PVAR_READONLY | CNT_PVAR_ATOMIC);
    int pa = add_pvar("atomic", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src,
                      CNT_PVAR_ATOMIC);
    ibmsg_t_pvar_handle_t hc = alloc(pc), hr = alloc(pr), ha = alloc(pa);
    unsigned long long v = 0;

    EXPECT_TRUE(cnt_pvar_is_started(pc)); /* continuous: started at allocation */
    src += 4;
    EXPECT_EQ(read<unsigned long long>(hc), 4u);
    EXPECT_EQ(ibmsg_t_pvar_start(s, hc), IBMSG_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT_EQ(ibmsg_t_pvar_stop(s, hc), IBMSG_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT_EQ(ibmsg_t_pvar_readreset(s, hc, &v), IBMSG_T_ERR_PVAR_NO_ATOMIC);
    ASSERT_EQ(ibmsg_t_pvar_reset(s, hc), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<unsigned long long>(hc), 0u);

    EXPECT_EQ(ibmsg_t_pvar_write(s, hr, &v), IBMSG_T_ERR_PVAR_NO_WRITE);
    EXPECT_EQ(ibmsg_t_pvar_reset(s, hr), IBMSG_T_ERR_PVAR_NO_WRITE);
    EXPECT_EQ(ibmsg_t_pvar_readreset(s, hr, &v), IBMSG_T_ERR_PVAR_NO_WRITE);

    ASSERT_EQ(ibmsg_t_pvar_start(s, ha), IBMSG_T_SUCCESS);
    src += 6;
    ASSERT_EQ(ibmsg_t_pvar_readreset(s, ha, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 6u);
    src += 2;
    ASSERT_EQ(ibmsg_t_pvar_readreset(s, ha, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 2u); /* the second readreset starts where the first one read */
    EXPECT_EQ(read<unsigned long long>(ha), 0u);
}

TEST_F(ToolSession, AllHandlesSkipsWhatDoesNotApply)
{
    unsigned long long src = 0;
    int pc = add_pvar("cont", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src,
                      CNT_PVAR_CONTINUOUS);
    int pr = add_pvar("ro", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src,
                      CNT_PVAR_READONLY);
    int pn = add_pvar("normal", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_handle_t hc = alloc(pc), hr = alloc(pr), hn = alloc(pn);
    unsigned long long v;

    ASSERT_EQ(ibmsg_t_pvar_start(s, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    src += 5;
    EXPECT_EQ(read<unsigned long long>(hc), 5u);
    EXPECT_EQ(read<unsigned long long>(hr), 5u);
    EXPECT_EQ(read<unsigned long long>(hn), 5u);
    ASSERT_EQ(ibmsg_t_pvar_reset(s, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<unsigned long long>(hc), 0u);
    EXPECT_EQ(read<unsigned long long>(hr), 5u); /* read-only: skipped */
    EXPECT_EQ(read<unsigned long long>(hn), 0u);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    src += 1;
    EXPECT_EQ(read<unsigned long long>(hc), 1u); /* continuous: still running */
    EXPECT_EQ(read<unsigned long long>(hn), 0u);

    EXPECT_EQ(ibmsg_t_pvar_read(s, IBMSG_T_PVAR_ALL_HANDLES, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_write(s, IBMSG_T_PVAR_ALL_HANDLES, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_readreset(s, IBMSG_T_PVAR_ALL_HANDLES, &v), IBMSG_T_ERR_INVALID_HANDLE);
    ibmsg_t_pvar_handle_t all = IBMSG_T_PVAR_ALL_HANDLES;
    EXPECT_EQ(ibmsg_t_pvar_handle_free(s, &all), IBMSG_T_ERR_INVALID_HANDLE);
}

/* A source that records, in one global order, its reads and its notifications. */
struct order_source {
    std::vector<std::string> *log;
    const char *name;
    unsigned long long v;
    int refuse_start;
};

static int order_read(void *, int, void *buf, void *ctx)
{
    order_source *o = static_cast<order_source *>(ctx);
    o->log->push_back(std::string("read ") + o->name);
    *static_cast<unsigned long long *>(buf) = o->v;
    return IBMSG_OK;
}

static int order_notify(cnt_notify_event_t ev, void *, int *count, void *ctx)
{
    order_source *o = static_cast<order_source *>(ctx);
    if (ev == CNT_NOTIFY_BIND) {
        *count = 1;
        return IBMSG_OK;
    }
    if (ev == CNT_NOTIFY_START && o->refuse_start) {
        return IBMSG_T_ERR_NOT_ACCESSIBLE;
    }
    static const char *names[] = {"bind", "free", "start", "stop"};
    o->log->push_back(std::string(names[ev]) + " " + o->name);
    return IBMSG_OK;
}

TEST_F(ToolSession, ListsValidateThenSnapshotThenChangeAtOneInstant)
{
    std::vector<std::string> log;
    order_source a = {&log, "a", 0, 0}, b = {&log, "b", 0, 0};
    int idx[2];
    order_source *srcs[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        std::string name = tool_unique(srcs[i]->name);
        cnt_pvar_desc_t d = {};
        d.name = name.c_str();
        d.var_class = IBMSG_T_PVAR_CLASS_COUNTER;
        d.datatype = IBMSG_T_UNSIGNED_LONG_LONG;
        d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
        d.read = order_read;
        d.notify = order_notify;
        d.ctx = srcs[i];
        ASSERT_EQ(cnt_pvar_register(&d, &idx[i]), IBMSG_OK);
    }
    ibmsg_t_pvar_handle_t hs[3] = {alloc(idx[0]), alloc(idx[1]), IBMSG_T_PVAR_HANDLE_NULL};

    /* An invalid handle anywhere in the list fails it with nothing changed. */
    log.clear();
    EXPECT_EQ(ibmsg_t_pvar_start_list(s, 3, hs), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_TRUE(log.empty());
    EXPECT_FALSE(cnt_pvar_is_started(idx[0]));

    /* Duplicates act once. */
    ibmsg_t_pvar_handle_t list[3] = {hs[0], hs[1], hs[0]};
    ASSERT_EQ(ibmsg_t_pvar_start_list(s, 3, list), IBMSG_T_SUCCESS);
    std::vector<std::string> want = {"start a", "start b", "read a", "read b"};
    EXPECT_EQ(log, want);

    a.v = 10;
    b.v = 20;
    log.clear();
    ASSERT_EQ(ibmsg_t_pvar_stop_list(s, 2, hs), IBMSG_T_SUCCESS);
    want = {"read a", "read b", "stop a", "stop b"};
    EXPECT_EQ(log, want);
    EXPECT_EQ(read<unsigned long long>(hs[0]), 10u);
    EXPECT_EQ(read<unsigned long long>(hs[1]), 20u);
    ASSERT_EQ(ibmsg_t_pvar_reset_list(s, 2, hs), IBMSG_T_SUCCESS);
    EXPECT_EQ(read<unsigned long long>(hs[0]), 0u);
    EXPECT_EQ(ibmsg_t_pvar_start_list(s, -1, hs), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_start_list(s, 1, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_start_list(s, 0, nullptr), IBMSG_T_SUCCESS);

    /* A source refusing START undoes the ones already notified. */
    b.refuse_start = 1;
    log.clear();
    EXPECT_EQ(ibmsg_t_pvar_start_list(s, 2, hs), IBMSG_T_ERR_NOT_ACCESSIBLE);
    want = {"start a", "stop a"};
    EXPECT_EQ(log, want);
    EXPECT_FALSE(cnt_pvar_is_started(idx[0]));
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS); /* before the sources go */
}

static int bound_read(void *obj, int, void *buf, void *)
{
    *static_cast<unsigned long long *>(buf) = *static_cast<unsigned long long *>(obj);
    return IBMSG_OK;
}

static int bound_notify(cnt_notify_event_t ev, void *obj, int *count, void *)
{
    if (ev == CNT_NOTIFY_BIND) {
        if (*static_cast<unsigned long long *>(obj) == 666) {
            return IBMSG_T_ERR_INVALID_HANDLE; /* an object this source does not serve */
        }
        *count = 1;
    }
    return IBMSG_OK;
}

TEST_F(ToolSession, BindingDereferencesTheObjectHandle)
{
    std::string name = tool_unique("bound");
    cnt_pvar_desc_t d = {};
    d.name = name.c_str();
    d.var_class = IBMSG_T_PVAR_CLASS_LEVEL;
    d.datatype = IBMSG_T_UNSIGNED_LONG_LONG;
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.bind = IBMSG_T_BIND_CONTEXT;
    d.read = bound_read;
    d.notify = bound_notify;
    int p, count;
    ASSERT_EQ(cnt_pvar_register(&d, &p), IBMSG_OK);

    unsigned long long obj1 = 11, obj2 = 22, bad = 666;
    void *o1 = &obj1, *o2 = &obj2, *ob = &bad, *null_obj = nullptr;
    ibmsg_t_pvar_handle_t h1 = alloc(p, 1, &o1), h2 = alloc(p, 1, &o2), h;
    EXPECT_EQ(read<unsigned long long>(h1), 11u);
    EXPECT_EQ(read<unsigned long long>(h2), 22u);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, &h, &count), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, &null_obj, &h, &count), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, &ob, &h, &count), IBMSG_T_ERR_INVALID_HANDLE);
}

TEST_F(ToolSession, StaleAndForgedHandlesAreErrorsNotCrashes)
{
    unsigned long long src = 0, v;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_handle_t h = alloc(p), copy = h;
    int count;

    ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &h), IBMSG_T_SUCCESS);
    EXPECT_EQ(h, IBMSG_T_PVAR_HANDLE_NULL);
    EXPECT_EQ(ibmsg_t_pvar_read(s, copy, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_start(s, copy), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_handle_free(s, &copy), IBMSG_T_ERR_INVALID_HANDLE);
    /* The slot is reused by the next handle; the old value still does not name it. */
    ibmsg_t_pvar_handle_t h2 = alloc(p);
    EXPECT_NE(h2, copy);
    EXPECT_EQ(ibmsg_t_pvar_read(s, copy, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_NE(h2, IBMSG_T_PVAR_HANDLE_NULL);
    EXPECT_NE(h2, IBMSG_T_PVAR_ALL_HANDLES);

    ibmsg_t_pvar_handle_t forged[] = {
        IBMSG_T_PVAR_HANDLE_NULL, (ibmsg_t_pvar_handle_t)(uintptr_t)0xdeadbeef,
        (ibmsg_t_pvar_handle_t)(uintptr_t)s, (ibmsg_t_pvar_handle_t) ~(uintptr_t)0};
    for (ibmsg_t_pvar_handle_t f : forged) {
        EXPECT_EQ(ibmsg_t_pvar_read(s, f, &v), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_pvar_stop(s, f), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_pvar_reset(s, f), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_pvar_write(s, f, &v), IBMSG_T_ERR_INVALID_HANDLE);
        EXPECT_EQ(ibmsg_t_pvar_readreset(s, f, &v), IBMSG_T_ERR_INVALID_HANDLE);
    }

    ibmsg_t_pvar_session_t bad = (ibmsg_t_pvar_session_t)(uintptr_t)h2;
    EXPECT_EQ(ibmsg_t_pvar_read(bad, h2, &v), IBMSG_T_ERR_INVALID_SESSION);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(bad, p, nullptr, &h, &count), IBMSG_T_ERR_INVALID_SESSION);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&bad), IBMSG_T_ERR_INVALID_SESSION);
    ibmsg_t_pvar_session_t old = s;
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS); /* frees h2 too */
    EXPECT_EQ(ibmsg_t_pvar_session_free(&old), IBMSG_T_ERR_INVALID_SESSION);
    EXPECT_EQ(ibmsg_t_pvar_read(old, h2, &v), IBMSG_T_ERR_INVALID_SESSION);
    EXPECT_EQ(ibmsg_t_pvar_start(old, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_ERR_INVALID_SESSION);
}

TEST_F(ToolSession, ArgumentErrors)
{
    unsigned long long src = 0;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_handle_t h = alloc(p);
    int count;

    EXPECT_EQ(ibmsg_t_pvar_session_create(nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_session_free(nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, nullptr, &count), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, &h, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, -1, nullptr, &h, &count), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, INT_MAX, nullptr, &h, &count),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_pvar_handle_free(s, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_read(s, h, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_write(s, h, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_readreset(s, h, nullptr), IBMSG_T_ERR_INVALID);
}

TEST_F(ToolSession, CapsGiveOutOfSessionsAndHandles)
{
    unsigned long long src = 0;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_session_t s2, s3;
    ibmsg_t_pvar_handle_t h1, h2, h3;
    int count;

    cnt_tool_test_set_limits(2, 2);
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s2), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_session_create(&s3), IBMSG_T_ERR_OUT_OF_SESSIONS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, &h1, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s2, p, nullptr, &h2, &count), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, &h3, &count), IBMSG_T_ERR_OUT_OF_HANDLES);
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &h1), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, &h3, &count), IBMSG_T_SUCCESS);
    cnt_tool_test_set_limits(0, 0);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&s2), IBMSG_T_SUCCESS);
}

/* A notify callback may register variables and categories: the lock is recursive. */
static int registering_notify(cnt_notify_event_t ev, void *, int *count, void *ctx)
{
    if (ev == CNT_NOTIFY_BIND) {
        const std::string *base = static_cast<const std::string *>(ctx);
        std::string cat_name = *base + "_cat";
        int index;
        if (cnt_category_register(cat_name.c_str(), nullptr, nullptr, &index) != IBMSG_OK) {
            return IBMSG_T_ERR_INVALID;
        }
        *count = 0; /* this object has no elements */
    }
    return IBMSG_OK;
}

TEST_F(ToolSession, NotifyMayRegisterAndCountMayBeZero)
{
    std::string name = tool_unique("reentrant");
    cnt_pvar_desc_t d = {};
    d.name = name.c_str();
    d.var_class = IBMSG_T_PVAR_CLASS_COUNTER;
    d.datatype = IBMSG_T_UNSIGNED_LONG_LONG;
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.notify = registering_notify;
    d.ctx = &name;
    int p, index;
    ASSERT_EQ(cnt_pvar_register(&d, &p), IBMSG_OK);
    ibmsg_t_pvar_handle_t h = alloc(p, 0);
    ASSERT_EQ(ibmsg_t_category_get_index((name + "_cat").c_str(), &index), IBMSG_T_SUCCESS);
    unsigned long long v = 5;
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 5u); /* nothing written for zero elements */
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
}
