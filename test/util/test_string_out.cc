#include "util/string_out.h"

#include <gtest/gtest.h>

#include <cstring>

TEST(StringOut, NullBufferGivesFullLength)
{
    int len = 7;
    util_string_out("hello", nullptr, &len);
    EXPECT_EQ(len, 6);
}

TEST(StringOut, ZeroLengthWritesNothing)
{
    char buf[4] = {'x', 'x', 'x', 'x'};
    int len = 0;
    util_string_out("hello", buf, &len);
    EXPECT_EQ(len, 6);
    EXPECT_EQ(buf[0], 'x');
}

TEST(StringOut, ExactBufferFits)
{
    char buf[6];
    int len = 6;
    util_string_out("hello", buf, &len);
    EXPECT_EQ(len, 6);
    EXPECT_STREQ(buf, "hello");
}

TEST(StringOut, ShortBufferTruncatesAndTerminates)
{
    char buf[8];
    std::memset(buf, 'x', sizeof(buf));
    int len = 3;
    util_string_out("hello", buf, &len);
    EXPECT_EQ(len, 3);
    EXPECT_STREQ(buf, "he");
    EXPECT_EQ(buf[3], 'x');
}

TEST(StringOut, OneByteBufferGetsOnlyTheNul)
{
    char buf[2] = {'x', 'x'};
    int len = 1;
    util_string_out("hello", buf, &len);
    EXPECT_EQ(len, 1);
    EXPECT_EQ(buf[0], '\0');
}

TEST(StringOut, NullSourceIsEmptyStringOfLengthOne)
{
    char buf[4];
    int len = 4;
    util_string_out(nullptr, buf, &len);
    EXPECT_EQ(len, 1);
    EXPECT_STREQ(buf, "");
    len = 0;
    util_string_out(nullptr, nullptr, &len);
    EXPECT_EQ(len, 1);
}

TEST(StringOut, NegativeLengthIsALengthQuery)
{
    char buf[4] = {'x'};
    int len = -5;
    util_string_out("ab", buf, &len);
    EXPECT_EQ(len, 3);
    EXPECT_EQ(buf[0], 'x');
}

TEST(StringOut, NullLengthIsIgnored)
{
    char buf[4] = {'x'};
    util_string_out("ab", buf, nullptr);
    EXPECT_EQ(buf[0], 'x');
}
