/* ibmsg_t_pvar_read_total: the source's own value behind a started handle, MPI_T state aside. */
#include "tool_fixture.h"

class ToolReadTotal : public ToolTest
{
  public:
    void SetUp() override
    {
        ToolTest::SetUp();
        ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
        ToolTest::TearDown();
    }
    ibmsg_t_pvar_handle_t alloc(int index)
    {
        ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
        int count = -1;
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
        EXPECT_EQ(count, 1);
        return h;
    }
    unsigned long long read(ibmsg_t_pvar_handle_t h)
    {
        unsigned long long v = ~0ull;
        EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
        return v;
    }
    unsigned long long total(ibmsg_t_pvar_handle_t h)
    {
        unsigned long long v = ~0ull;
        EXPECT_EQ(ibmsg_t_pvar_read_total(s, h, &v), IBMSG_T_SUCCESS);
        return v;
    }
    ibmsg_t_pvar_session_t s = IBMSG_T_PVAR_SESSION_NULL;
};

// A counter's total is its source's value: start, reset and write change what ibmsg_t_pvar_read
// gives, never the total.
TEST_F(ToolReadTotal, CounterTotalIgnoresStartResetAndWrite)
{
    unsigned long long src = 1000;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_handle_t h = alloc(p);
    unsigned long long v = 0;

    // Not started: a source may count only while a handle runs, so there is nothing to read.
    EXPECT_EQ(ibmsg_t_pvar_read_total(s, h, &v), IBMSG_T_ERR_NOT_ACCESSIBLE);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    EXPECT_EQ(read(h), 0u);
    EXPECT_EQ(total(h), 1000u);
    src += 25;
    EXPECT_EQ(read(h), 25u);
    EXPECT_EQ(total(h), 1025u);
    ASSERT_EQ(ibmsg_t_pvar_reset(s, h), IBMSG_T_SUCCESS);
    unsigned long long w = 7;
    ASSERT_EQ(ibmsg_t_pvar_write(s, h, &w), IBMSG_T_SUCCESS);
    EXPECT_EQ(read(h), 7u);
    EXPECT_EQ(total(h), 1025u);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, h), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_read_total(s, h, &v), IBMSG_T_ERR_NOT_ACCESSIBLE);
    EXPECT_EQ(v, 0u); // an output is set only on success
}

// Other classes: the source's current value; a continuous handle is always started.
TEST_F(ToolReadTotal, LevelAndContinuousReadTheSource)
{
    unsigned long long level = 40, cont = 9;
    int pl = add_pvar("l", IBMSG_T_PVAR_CLASS_LEVEL, IBMSG_T_UNSIGNED_LONG_LONG, &level);
    int pc = add_pvar("k", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &cont,
                      CNT_PVAR_CONTINUOUS);
    ibmsg_t_pvar_handle_t hl = alloc(pl), hc = alloc(pc);

    ASSERT_EQ(ibmsg_t_pvar_start(s, hl), IBMSG_T_SUCCESS);
    level = 41;
    EXPECT_EQ(total(hl), 41u);
    cont += 1;
    EXPECT_EQ(read(hc), 1u);
    EXPECT_EQ(total(hc), 10u);
}

// The handle and session checks of ibmsg_t_pvar_read.
TEST_F(ToolReadTotal, ArgumentErrors)
{
    unsigned long long src = 3, v = 0;
    int p = add_pvar("e", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_handle_t h = alloc(p);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);

    EXPECT_EQ(ibmsg_t_pvar_read_total(s, h, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_read_total(s, IBMSG_T_PVAR_ALL_HANDLES, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_pvar_read_total(IBMSG_T_PVAR_SESSION_NULL, h, &v),
              IBMSG_T_ERR_INVALID_SESSION);
    ibmsg_t_pvar_session_t other = IBMSG_T_PVAR_SESSION_NULL;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&other), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_read_total(other, h, &v), IBMSG_T_ERR_INVALID_HANDLE);
    ASSERT_EQ(ibmsg_t_pvar_session_free(&other), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 0u);
}
