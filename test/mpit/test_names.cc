#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "mpit/names.h"
}

TEST(MpitNames, PrefixedAndReversible)
{
    char buf[64];
    int len = sizeof(buf);
    mpit_name_out("log_level", buf, &len);
    EXPECT_STREQ("ibmsg_log_level", buf);
    EXPECT_EQ(16, len);
    EXPECT_STREQ("log_level", mpit_name_native("ibmsg_log_level"));

    len = sizeof(buf);
    mpit_name_out("ibmsg", buf, &len);
    EXPECT_STREQ("ibmsg", buf) << "the root category keeps its name";
    EXPECT_STREQ("ibmsg", mpit_name_native("ibmsg"));

    len = sizeof(buf);
    mpit_name_out("ibmsg_x", buf, &len);
    EXPECT_STREQ("ibmsg_ibmsg_x", buf) << "one to one: no two natives share a view name";
    EXPECT_STREQ("ibmsg_x", mpit_name_native("ibmsg_ibmsg_x"));
}

TEST(MpitNames, NotOurs)
{
    EXPECT_EQ(nullptr, mpit_name_native("MPIR_CVAR_ASYNC_PROGRESS"));
    EXPECT_EQ(nullptr, mpit_name_native("ibmsgx"));
    EXPECT_EQ(nullptr, mpit_name_native("ibmsg_"));
    EXPECT_EQ(nullptr, mpit_name_native(""));
    EXPECT_EQ(nullptr, mpit_name_native(nullptr));
}

// MPI_T string rules: length query, truncation with NUL, bytes written.
TEST(MpitNames, StringSemantics)
{
    int len = 0;
    mpit_name_out("log_level", nullptr, &len);
    EXPECT_EQ(16, len);
    len = 0;
    char buf[8];
    std::memset(buf, 'z', sizeof(buf));
    mpit_name_out("log_level", buf, &len);
    EXPECT_EQ(16, len);
    EXPECT_EQ('z', buf[0]) << "len 0 writes nothing";
    for (int cap = 1; cap <= 8; cap++) {
        len = cap;
        mpit_name_out("log_level", buf, &len);
        EXPECT_EQ(cap, len);
        EXPECT_EQ(std::string("ibmsg_log_level").substr(0, cap - 1), std::string(buf));
    }
    mpit_name_out("x", buf, nullptr); // no crash
}
