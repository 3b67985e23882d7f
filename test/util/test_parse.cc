#include "util/parse.h"

#include <ibmsg/status.h>

#include <gtest/gtest.h>

#include <climits>

TEST(Parse, SignedIntegers)
{
    long long v = 0;
    EXPECT_EQ(util_parse_ll(" -12 ", INT_MIN, INT_MAX, &v), IBMSG_OK);
    EXPECT_EQ(v, -12);
    EXPECT_EQ(util_parse_ll("010", 0, 100, &v), IBMSG_OK);
    EXPECT_EQ(v, 10); /* decimal, not octal */
    EXPECT_EQ(util_parse_ll("0x1F", 0, 100, &v), IBMSG_OK);
    EXPECT_EQ(v, 31);
    EXPECT_EQ(util_parse_ll("101", 0, 100, &v), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(util_parse_ll("99999999999999999999", LLONG_MIN, LLONG_MAX, &v),
              IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(util_parse_ll("", 0, 1, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_ll("  ", 0, 1, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_ll("1 2", 0, 100, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_ll("x", 0, 100, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_ll(nullptr, 0, 100, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_ll("1", 0, 100, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(v, 31); /* untouched by failures */
}

TEST(Parse, UnsignedIntegers)
{
    unsigned long long v = 0;
    EXPECT_EQ(util_parse_ull("18446744073709551615", ULLONG_MAX, &v), IBMSG_OK);
    EXPECT_EQ(v, ULLONG_MAX);
    EXPECT_EQ(util_parse_ull("18446744073709551616", ULLONG_MAX, &v), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(util_parse_ull("-1", ULLONG_MAX, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_ull("256", 255, &v), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(util_parse_ull("+7", 255, &v), IBMSG_OK);
    EXPECT_EQ(v, 7u);
}

TEST(Parse, Doubles)
{
    double v = 0;
    EXPECT_EQ(util_parse_double(" 1.5e2 ", &v), IBMSG_OK);
    EXPECT_EQ(v, 150.0);
    EXPECT_EQ(util_parse_double("1e400", &v), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(util_parse_double("inf", &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_double("nan", &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_double("1.0x", &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(util_parse_double("", &v), IBMSG_ERR_INVALID);
}

TEST(Parse, CaseInsensitiveEquality)
{
    EXPECT_TRUE(util_str_equal_nocase("Debug", "dEBUG"));
    EXPECT_FALSE(util_str_equal_nocase("debug", "debugx"));
    EXPECT_FALSE(util_str_equal_nocase("", "x"));
    EXPECT_TRUE(util_str_equal_nocase("", ""));
}
