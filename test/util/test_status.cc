#include <ibmsg/status.h>
#include <ibmsg/version.h>

#include <gtest/gtest.h>

#include <set>
#include <string>

TEST(Status, EveryCodeHasItsOwnString)
{
    std::set<std::string> seen;
    std::set<int> codes;
#define CHECK_STATUS(name, value, text)                                   \
    EXPECT_STREQ(ibmsg_status_string(IBMSG_##name), text);                \
    EXPECT_TRUE(seen.insert(text).second) << "duplicate string " << text; \
    EXPECT_TRUE(codes.insert(value).second) << "duplicate code " << value;
    IBMSG_STATUS_LIST(CHECK_STATUS)
#undef CHECK_STATUS
    EXPECT_EQ(IBMSG_OK, 0);
}

TEST(Status, ErrorsAreNegative)
{
#define CHECK_NEGATIVE(name, value, text)    \
    if (IBMSG_##name != IBMSG_OK) {          \
        EXPECT_LT(IBMSG_##name, 0) << #name; \
    }
    IBMSG_STATUS_LIST(CHECK_NEGATIVE)
#undef CHECK_NEGATIVE
}

TEST(Status, UnknownCodeIsNamedUnknown)
{
    EXPECT_STREQ(ibmsg_status_string(12345), "unknown status");
    EXPECT_STREQ(ibmsg_status_string(-99999), "unknown status");
}

TEST(Version, LoadedLibraryMatchesHeader)
{
    EXPECT_STREQ(ibmsg_version_string(), IBMSG_VERSION_STRING);
}
