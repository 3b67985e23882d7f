/* Info objects: typed terms in order, replace in place, dup, errors. */
#include <ibmsg/info.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

class Info : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        ASSERT_EQ(ibmsg_info_create(&info), IBMSG_OK);
    }
    void TearDown() override
    {
        if (info != IBMSG_INFO_NULL) {
            EXPECT_EQ(ibmsg_info_free(&info), IBMSG_OK);
        }
    }
    std::string nth(ibmsg_info_t i, int n, ibmsg_info_type_t *type = nullptr)
    {
        char buf[300];
        int len = sizeof(buf);
        EXPECT_EQ(ibmsg_info_get_nthkey(i, n, buf, &len, type), IBMSG_OK);
        return buf;
    }
    ibmsg_info_t info = IBMSG_INFO_NULL;
};

TEST_F(Info, CreateAndFree)
{
    ibmsg_info_t i;
    int n = -1;
    ASSERT_EQ(ibmsg_info_create(&i), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_get_nkeys(i, &n), IBMSG_OK);
    EXPECT_EQ(n, 0);
    ASSERT_EQ(ibmsg_info_free(&i), IBMSG_OK);
    EXPECT_EQ(i, IBMSG_INFO_NULL);
    EXPECT_EQ(ibmsg_info_free(&i), IBMSG_ERR_INVALID); /* freeing IBMSG_INFO_NULL */
    EXPECT_EQ(ibmsg_info_free(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_create(nullptr), IBMSG_ERR_INVALID);
}

TEST_F(Info, TypedSetAndGet)
{
    ASSERT_EQ(ibmsg_info_set_string(info, "s", "text"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "i", -1234567890123LL), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_double(info, "d", 0.25), IBMSG_OK);
    int64_t iv;
    double dv;
    char sv[8];
    int len = sizeof(sv);
    ibmsg_info_type_t t;
    ASSERT_EQ(ibmsg_info_get_int(info, "i", &iv), IBMSG_OK);
    EXPECT_EQ(iv, -1234567890123LL);
    ASSERT_EQ(ibmsg_info_get_double(info, "d", &dv), IBMSG_OK);
    EXPECT_EQ(dv, 0.25);
    ASSERT_EQ(ibmsg_info_get_string(info, "s", sv, &len), IBMSG_OK);
    EXPECT_STREQ(sv, "text");
    EXPECT_EQ(len, 5);
    len = 0;
    ASSERT_EQ(ibmsg_info_get_string(info, "s", nullptr, &len), IBMSG_OK);
    EXPECT_EQ(len, 5);
    len = 3;
    ASSERT_EQ(ibmsg_info_get_string(info, "s", sv, &len), IBMSG_OK);
    EXPECT_STREQ(sv, "te");
    ASSERT_EQ(ibmsg_info_get_type(info, "d", &t), IBMSG_OK);
    EXPECT_EQ(t, IBMSG_INFO_TYPE_DOUBLE);

    EXPECT_EQ(ibmsg_info_get_int(info, "d", &iv), IBMSG_ERR_WRONG_TYPE);
    EXPECT_EQ(ibmsg_info_get_double(info, "s", &dv), IBMSG_ERR_WRONG_TYPE);
    EXPECT_EQ(ibmsg_info_get_string(info, "i", sv, &len), IBMSG_ERR_WRONG_TYPE);
    EXPECT_EQ(ibmsg_info_get_int(info, "missing", &iv), IBMSG_ERR_NOT_FOUND);
    EXPECT_EQ(ibmsg_info_get_type(info, "missing", &t), IBMSG_ERR_NOT_FOUND);
    EXPECT_EQ(ibmsg_info_get_int(info, "I", &iv), IBMSG_ERR_NOT_FOUND); /* case-sensitive */
}

TEST_F(Info, LaterValueReplacesInPlaceIncludingType)
{
    ASSERT_EQ(ibmsg_info_set_int(info, "a", 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_append(info, "bare"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "b", 2), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_string(info, "a", "now a string"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_double(info, "a", 3.5), IBMSG_OK);
    int n;
    ASSERT_EQ(ibmsg_info_get_nkeys(info, &n), IBMSG_OK);
    EXPECT_EQ(n, 3);
    ibmsg_info_type_t t;
    EXPECT_EQ(nth(info, 0, &t), "a");
    EXPECT_EQ(t, IBMSG_INFO_TYPE_DOUBLE);
    EXPECT_EQ(nth(info, 1, &t), "bare");
    EXPECT_EQ(t, IBMSG_INFO_TYPE_NONE);
    EXPECT_EQ(nth(info, 2, &t), "b");
    EXPECT_EQ(t, IBMSG_INFO_TYPE_INT);
    double d;
    ASSERT_EQ(ibmsg_info_get_double(info, "a", &d), IBMSG_OK);
    EXPECT_EQ(d, 3.5);
}

TEST_F(Info, BareStringsAppendInOrder)
{
    ASSERT_EQ(ibmsg_info_append(info, "x"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_append(info, "x"), IBMSG_OK); /* bare strings never replace */
    ASSERT_EQ(ibmsg_info_append(info, "y"), IBMSG_OK);
    int n;
    ASSERT_EQ(ibmsg_info_get_nkeys(info, &n), IBMSG_OK);
    EXPECT_EQ(n, 3);
    EXPECT_EQ(nth(info, 0), "x");
    EXPECT_EQ(nth(info, 1), "x");
    EXPECT_EQ(nth(info, 2), "y");
    ibmsg_info_type_t t;
    EXPECT_EQ(ibmsg_info_get_type(info, "x", &t), IBMSG_ERR_NOT_FOUND); /* not a key */
}

TEST_F(Info, DupIsADeepCopyInTheSameOrder)
{
    ASSERT_EQ(ibmsg_info_set_string(info, "s", "v"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_append(info, "bare"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "i", 7), IBMSG_OK);
    ibmsg_info_t copy;
    ASSERT_EQ(ibmsg_info_dup(info, &copy), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_string(info, "s", "changed"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_free(&info), IBMSG_OK);
    int n;
    ASSERT_EQ(ibmsg_info_get_nkeys(copy, &n), IBMSG_OK);
    EXPECT_EQ(n, 3);
    EXPECT_EQ(nth(copy, 0), "s");
    EXPECT_EQ(nth(copy, 1), "bare");
    EXPECT_EQ(nth(copy, 2), "i");
    char v[8];
    int len = sizeof(v);
    ASSERT_EQ(ibmsg_info_get_string(copy, "s", v, &len), IBMSG_OK);
    EXPECT_STREQ(v, "v");
    EXPECT_EQ(ibmsg_info_dup(copy, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_dup(IBMSG_INFO_NULL, &info), IBMSG_ERR_INVALID);
    ASSERT_EQ(ibmsg_info_free(&copy), IBMSG_OK);
}

TEST_F(Info, ArgumentErrors)
{
    std::string longest(IBMSG_INFO_MAX_KEY, 'k'), too_long(IBMSG_INFO_MAX_KEY + 1, 'k');
    EXPECT_EQ(ibmsg_info_set_int(info, longest.c_str(), 1), IBMSG_OK);
    EXPECT_EQ(ibmsg_info_set_int(info, too_long.c_str(), 1), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_set_int(info, "", 1), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_set_int(info, nullptr, 1), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_set_string(info, "k", nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_set_string(IBMSG_INFO_NULL, "k", "v"), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_set_double(IBMSG_INFO_NULL, "k", 1.0), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_append(info, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_append(IBMSG_INFO_NULL, "x"), IBMSG_ERR_INVALID);
    int64_t iv;
    int len = 4, n;
    EXPECT_EQ(ibmsg_info_get_int(info, too_long.c_str(), &iv), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_get_int(info, longest.c_str(), nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_get_string(info, "k", nullptr, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_get_type(info, "k", nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_get_nkeys(info, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_get_nkeys(IBMSG_INFO_NULL, &n), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_info_get_nthkey(info, 1, nullptr, &len, nullptr), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(ibmsg_info_get_nthkey(info, -1, nullptr, &len, nullptr), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(ibmsg_info_get_nthkey(info, 0, nullptr, nullptr, nullptr), IBMSG_ERR_INVALID);
    ASSERT_EQ(ibmsg_info_get_nthkey(info, 0, nullptr, &len, nullptr), IBMSG_OK);
    EXPECT_EQ(len, IBMSG_INFO_MAX_KEY + 1);
}
