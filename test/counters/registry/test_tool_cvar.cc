/* Control variables: info, handles, read/write, scopes, strings, info objects. */
#include "tool_fixture.h"

#include <cfloat>
#include <climits>
#include <cstring>
#include <string>

class ToolCvar : public ToolTest
{
  public:
    ibmsg_t_cvar_handle_t handle(int index, int expect_count = 1)
    {
        ibmsg_t_cvar_handle_t h = IBMSG_T_CVAR_HANDLE_NULL;
        int count = -1;
        EXPECT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_T_SUCCESS);
        EXPECT_EQ(count, expect_count);
        return h;
    }
};

TEST_F(ToolCvar, InfoIndexAndStrings)
{
    int v = 0;
    int index = add_cvar("v", IBMSG_T_INT, &v, IBMSG_T_SCOPE_GROUP);
    std::string n = tool_unique("v");
    char name[128], desc[128];
    int nl = sizeof(name), dl = sizeof(desc), verb, bind, scope;
    ibmsg_t_datatype_t dt;
    ibmsg_t_enum_t et;
    ASSERT_EQ(ibmsg_t_cvar_get_info(index, name, &nl, &verb, &dt, &et, desc, &dl, &bind, &scope),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(n, name);
    EXPECT_EQ(nl, (int)n.size() + 1);
    EXPECT_STREQ(desc, "a test setting");
    EXPECT_EQ(dl, 15);
    EXPECT_EQ(verb, IBMSG_T_VERBOSITY_USER_DETAIL);
    EXPECT_EQ(dt, IBMSG_T_INT);
    EXPECT_EQ(et, IBMSG_T_ENUM_NULL);
    EXPECT_EQ(bind, IBMSG_T_BIND_NO_OBJECT);
    EXPECT_EQ(scope, IBMSG_T_SCOPE_GROUP);
    nl = 0;
    dl = 3;
    ASSERT_EQ(ibmsg_t_cvar_get_info(index, nullptr, &nl, nullptr, nullptr, nullptr, desc, &dl,
                                    nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(nl, (int)n.size() + 1);
    EXPECT_EQ(dl, 3);
    EXPECT_STREQ(desc, "a ");

    int found = -1, num;
    ASSERT_EQ(ibmsg_t_cvar_get_index(n.c_str(), &found), IBMSG_T_SUCCESS);
    EXPECT_EQ(found, index);
    EXPECT_EQ(ibmsg_t_cvar_get_index("nope, not a cvar", &found), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(ibmsg_t_cvar_get_index(nullptr, &found), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_cvar_get_index(n.c_str(), nullptr), IBMSG_T_ERR_INVALID);
    ASSERT_EQ(ibmsg_t_cvar_get_num(&num), IBMSG_T_SUCCESS);
    EXPECT_GT(num, index);
    EXPECT_EQ(ibmsg_t_cvar_get_num(nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_cvar_get_info(num, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_cvar_get_info(-1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
}

TEST_F(ToolCvar, RegistrationRules)
{
    int v = 0, index, again;
    index = add_cvar("v", IBMSG_T_INT, &v);
    std::string n = tool_unique("v");
    cnt_cvar_desc_t d = {};
    d.name = n.c_str();
    d.datatype = IBMSG_T_INT;
    d.verbosity = IBMSG_T_VERBOSITY_USER_DETAIL;
    d.scope = IBMSG_T_SCOPE_LOCAL;
    d.count = 1;
    d.desc = "a test setting";
    d.ctx = &v;
    ASSERT_EQ(cnt_cvar_register(&d, &again), IBMSG_OK);
    EXPECT_EQ(again, index);
    d.scope = IBMSG_T_SCOPE_ALL;
    EXPECT_EQ(cnt_cvar_register(&d, &again), IBMSG_ERR_EXISTS);
    d.scope = 0;
    std::string n2 = tool_unique("bad");
    d.name = n2.c_str();
    EXPECT_EQ(cnt_cvar_register(&d, &again), IBMSG_ERR_INVALID);
    d.scope = IBMSG_T_SCOPE_LOCAL;
    d.ctx = nullptr;
    EXPECT_EQ(cnt_cvar_register(&d, &again), IBMSG_ERR_INVALID);
    d.ctx = &v;
    d.datatype = IBMSG_T_DOUBLE;
    d.enumtype = (ibmsg_t_enum_t)(uintptr_t)12345; /* not an enum */
    EXPECT_EQ(cnt_cvar_register(&d, &again), IBMSG_ERR_INVALID);
    d.enumtype = IBMSG_T_ENUM_NULL;
    d.category = "no such category";
    EXPECT_EQ(cnt_cvar_register(&d, &again), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(cnt_cvar_register(nullptr, &again), IBMSG_ERR_INVALID);
}

TEST_F(ToolCvar, ReadAndWriteEveryDatatype)
{
    int i = 1;
    unsigned u = 2;
    unsigned long ul = 3;
    unsigned long long ull = 4;
    long long ll = 5;
    double d = 6.5;
    char s[16] = "hello";
    ibmsg_t_cvar_handle_t hi = handle(add_cvar("i", IBMSG_T_INT, &i));
    ibmsg_t_cvar_handle_t hu = handle(add_cvar("u", IBMSG_T_UNSIGNED, &u));
    ibmsg_t_cvar_handle_t hul = handle(add_cvar("ul", IBMSG_T_UNSIGNED_LONG, &ul));
    ibmsg_t_cvar_handle_t hull = handle(add_cvar("ull", IBMSG_T_UNSIGNED_LONG_LONG, &ull));
    ibmsg_t_cvar_handle_t hll = handle(add_cvar("ll", IBMSG_T_COUNT, &ll));
    ibmsg_t_cvar_handle_t hd = handle(add_cvar("d", IBMSG_T_DOUBLE, &d));
    ibmsg_t_cvar_handle_t hs = handle(add_cvar("s", IBMSG_T_CHAR, s, IBMSG_T_SCOPE_LOCAL, 16), 16);

    int ri;
    ASSERT_EQ(ibmsg_t_cvar_read(hi, &ri), IBMSG_T_SUCCESS);
    EXPECT_EQ(ri, 1);
    int wi = -7;
    ASSERT_EQ(ibmsg_t_cvar_write(hi, &wi), IBMSG_T_SUCCESS);
    EXPECT_EQ(i, -7);
    unsigned wu = 22;
    ASSERT_EQ(ibmsg_t_cvar_write(hu, &wu), IBMSG_T_SUCCESS);
    EXPECT_EQ(u, 22u);
    unsigned long wul = 33;
    ASSERT_EQ(ibmsg_t_cvar_write(hul, &wul), IBMSG_T_SUCCESS);
    EXPECT_EQ(ul, 33u);
    unsigned long long wull = ULLONG_MAX;
    ASSERT_EQ(ibmsg_t_cvar_write(hull, &wull), IBMSG_T_SUCCESS);
    EXPECT_EQ(ull, ULLONG_MAX);
    long long wll = LLONG_MIN;
    ASSERT_EQ(ibmsg_t_cvar_write(hll, &wll), IBMSG_T_SUCCESS);
    long long rll;
    ASSERT_EQ(ibmsg_t_cvar_read(hll, &rll), IBMSG_T_SUCCESS);
    EXPECT_EQ(rll, LLONG_MIN);
    double wd = 0.125, rd;
    ASSERT_EQ(ibmsg_t_cvar_write(hd, &wd), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_read(hd, &rd), IBMSG_T_SUCCESS);
    EXPECT_EQ(rd, 0.125);
    char rs[16];
    ASSERT_EQ(ibmsg_t_cvar_read(hs, rs), IBMSG_T_SUCCESS);
    EXPECT_STREQ(rs, "hello");
    ASSERT_EQ(ibmsg_t_cvar_write(hs, "a string far longer than sixteen"), IBMSG_T_SUCCESS);
    EXPECT_STREQ(s, "a string far lo"); /* bounded by count, NUL-terminated */

    EXPECT_EQ(ibmsg_t_cvar_read(hi, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_cvar_write(hi, nullptr), IBMSG_T_ERR_INVALID);
    for (ibmsg_t_cvar_handle_t *h : {&hi, &hu, &hul, &hull, &hll, &hd, &hs}) {
        EXPECT_EQ(ibmsg_t_cvar_handle_free(h), IBMSG_T_SUCCESS);
        EXPECT_EQ(*h, IBMSG_T_CVAR_HANDLE_NULL);
    }
}

TEST_F(ToolCvar, HandleErrors)
{
    int v = 0, count;
    int index = add_cvar("v", IBMSG_T_INT, &v);
    ibmsg_t_cvar_handle_t h = handle(index), copy = h;
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&copy), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_cvar_read(copy, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_cvar_write(copy, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_cvar_read(IBMSG_T_CVAR_HANDLE_NULL, &v), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_cvar_read((ibmsg_t_cvar_handle_t)(uintptr_t)0x1234, &v),
              IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_cvar_handle_free(nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, nullptr, &count), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(INT_MAX, nullptr, &h, &count), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(-1, nullptr, &h, &count), IBMSG_T_ERR_INVALID_INDEX);

    /* A bound cvar dereferences the object handle. */
    std::string n = tool_unique("bound");
    cnt_cvar_desc_t d = {};
    d.name = n.c_str();
    d.datatype = IBMSG_T_INT;
    d.verbosity = IBMSG_T_VERBOSITY_USER_DETAIL;
    d.bind = IBMSG_T_BIND_ENDPOINT;
    d.scope = IBMSG_T_SCOPE_LOCAL;
    d.read = [](void *obj, void *buf, void *) {
        *static_cast<int *>(buf) = *static_cast<int *>(obj);
        return (int)IBMSG_OK;
    };
    int bi;
    ASSERT_EQ(cnt_cvar_register(&d, &bi), IBMSG_OK);
    int ep = 42;
    void *obj = &ep, *null_obj = nullptr;
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(bi, nullptr, &h, &count), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(bi, &null_obj, &h, &count), IBMSG_T_ERR_INVALID_HANDLE);
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(bi, &obj, &h, &count), IBMSG_T_SUCCESS);
    int r = 0;
    ASSERT_EQ(ibmsg_t_cvar_read(h, &r), IBMSG_T_SUCCESS);
    EXPECT_EQ(r, 42);
    EXPECT_EQ(ibmsg_t_cvar_write(h, &r), IBMSG_T_ERR_CVAR_SET_NEVER); /* no storage to set */
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_T_SUCCESS);
}

static int refuse_now(void *, const void *, void *)
{
    return IBMSG_T_ERR_CVAR_SET_NOT_NOW;
}

TEST_F(ToolCvar, ScopesAndNotNow)
{
    int c = 1, r = 2, n = 3, w = 9;
    ibmsg_t_cvar_handle_t hc = handle(add_cvar("const", IBMSG_T_INT, &c, IBMSG_T_SCOPE_CONSTANT));
    ibmsg_t_cvar_handle_t hr = handle(add_cvar("ro", IBMSG_T_INT, &r, IBMSG_T_SCOPE_READONLY));
    ibmsg_t_cvar_handle_t hn = handle(
        add_cvar("notnow", IBMSG_T_INT, &n, IBMSG_T_SCOPE_ALL, 1, IBMSG_T_ENUM_NULL, refuse_now));
    EXPECT_EQ(ibmsg_t_cvar_write(hc, &w), IBMSG_T_ERR_CVAR_SET_NEVER);
    EXPECT_EQ(ibmsg_t_cvar_write(hr, &w), IBMSG_T_ERR_CVAR_SET_NEVER);
    EXPECT_EQ(ibmsg_t_cvar_write(hn, &w), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    EXPECT_EQ(c, 1);
    EXPECT_EQ(r, 2);
    EXPECT_EQ(n, 3);
    int idx;
    ASSERT_EQ(ibmsg_t_cvar_get_index(tool_unique("ro").c_str(), &idx), IBMSG_T_SUCCESS);
    EXPECT_EQ(cnt_cvar_set_string(idx, "5"), IBMSG_T_ERR_CVAR_SET_NEVER);
    ibmsg_t_cvar_handle_free(&hc);
    ibmsg_t_cvar_handle_free(&hr);
    ibmsg_t_cvar_handle_free(&hn);
}

TEST_F(ToolCvar, SetStringParsesByDatatypeWithRangeChecks)
{
    int i = 0;
    unsigned u = 0;
    unsigned long long ull = 0;
    long long ll = 0;
    double d = 0;
    char s[6] = "";
    int ii = add_cvar("i", IBMSG_T_INT, &i), iu = add_cvar("u", IBMSG_T_UNSIGNED, &u),
        iull = add_cvar("ull", IBMSG_T_UNSIGNED_LONG_LONG, &ull),
        ill = add_cvar("ll", IBMSG_T_COUNT, &ll), id = add_cvar("d", IBMSG_T_DOUBLE, &d),
        is = add_cvar("s", IBMSG_T_CHAR, s, IBMSG_T_SCOPE_LOCAL, 6);

    EXPECT_EQ(cnt_cvar_set_string(ii, " -42 "), IBMSG_OK);
    EXPECT_EQ(i, -42);
    EXPECT_EQ(cnt_cvar_set_string(ii, "0x10"), IBMSG_OK);
    EXPECT_EQ(i, 16);
    EXPECT_EQ(cnt_cvar_set_string(ii, "2147483648"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(ii, "-2147483649"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(ii, "12abc"), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(cnt_cvar_set_string(ii, ""), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(i, 16);
    EXPECT_EQ(cnt_cvar_set_string(iu, "4294967295"), IBMSG_OK);
    EXPECT_EQ(u, 4294967295u);
    EXPECT_EQ(cnt_cvar_set_string(iu, "4294967296"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(iu, "-1"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(iull, "18446744073709551615"), IBMSG_OK);
    EXPECT_EQ(ull, ULLONG_MAX);
    EXPECT_EQ(cnt_cvar_set_string(iull, "18446744073709551616"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(ill, "-9223372036854775808"), IBMSG_OK);
    EXPECT_EQ(ll, LLONG_MIN);
    EXPECT_EQ(cnt_cvar_set_string(ill, "9223372036854775808"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(id, "2.5e3"), IBMSG_OK);
    EXPECT_EQ(d, 2500.0);
    EXPECT_EQ(cnt_cvar_set_string(id, "1e999"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_cvar_set_string(id, "nan"), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(cnt_cvar_set_string(is, "12345"), IBMSG_OK);
    EXPECT_STREQ(s, "12345");
    EXPECT_EQ(cnt_cvar_set_string(is, "123456"), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_STREQ(s, "12345");
    EXPECT_EQ(cnt_cvar_set_string(ii, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(cnt_cvar_set_string(INT_MAX, "1"), IBMSG_T_ERR_INVALID_INDEX);
}

TEST_F(ToolCvar, EnumsByItemNameOrValue)
{
    cnt_enum_item_t items[] = {{10, "low"}, {20, "High"}};
    ibmsg_t_enum_t e, same;
    std::string en = tool_unique("enum");
    ASSERT_EQ(cnt_enum_register(en.c_str(), 2, items, &e), IBMSG_OK);
    ASSERT_EQ(cnt_enum_register(en.c_str(), 2, items, &same), IBMSG_OK);
    EXPECT_EQ(e, same);
    cnt_enum_item_t other[] = {{1, "x"}};
    EXPECT_EQ(cnt_enum_register(en.c_str(), 1, other, &same), IBMSG_ERR_EXISTS);
    EXPECT_EQ(cnt_enum_register(nullptr, 1, other, &same), IBMSG_ERR_INVALID);

    int v = 10;
    int index = add_cvar("mode", IBMSG_T_INT, &v, IBMSG_T_SCOPE_LOCAL, 1, e);
    EXPECT_EQ(cnt_cvar_set_string(index, "HIGH"), IBMSG_OK);
    EXPECT_EQ(v, 20);
    EXPECT_EQ(cnt_cvar_set_string(index, "10"), IBMSG_OK);
    EXPECT_EQ(v, 10);
    EXPECT_EQ(cnt_cvar_set_string(index, "15"), IBMSG_T_ERR_INVALID); /* not an item */
    EXPECT_EQ(cnt_cvar_set_string(index, "medium"), IBMSG_T_ERR_INVALID);

    int num = -1, len = 0, value = -1;
    char name[16];
    ASSERT_EQ(ibmsg_t_enum_get_info(e, &num, nullptr, &len), IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 2);
    EXPECT_EQ(len, (int)en.size() + 1);
    len = sizeof(name);
    ASSERT_EQ(ibmsg_t_enum_get_item(e, 1, &value, name, &len), IBMSG_T_SUCCESS);
    EXPECT_EQ(value, 20);
    EXPECT_STREQ(name, "High");
    EXPECT_EQ(len, 5);
    len = 2;
    ASSERT_EQ(ibmsg_t_enum_get_item(e, 0, nullptr, name, &len), IBMSG_T_SUCCESS);
    EXPECT_STREQ(name, "l");
    EXPECT_EQ(ibmsg_t_enum_get_item(e, 2, &value, name, &len), IBMSG_T_ERR_INVALID_ITEM);
    EXPECT_EQ(ibmsg_t_enum_get_item(e, -1, &value, name, &len), IBMSG_T_ERR_INVALID_ITEM);
    EXPECT_EQ(ibmsg_t_enum_get_info(IBMSG_T_ENUM_NULL, &num, nullptr, &len),
              IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_enum_get_item((ibmsg_t_enum_t)(uintptr_t)77, 0, &value, name, &len),
              IBMSG_T_ERR_INVALID_HANDLE);
}

TEST_F(ToolCvar, SetFromInfoUsesTypedValues)
{
    int i = 0;
    unsigned u = 0;
    double d = 0;
    char s[8] = "";
    add_cvar("i", IBMSG_T_INT, &i);
    add_cvar("u", IBMSG_T_UNSIGNED, &u);
    add_cvar("d", IBMSG_T_DOUBLE, &d);
    add_cvar("s", IBMSG_T_CHAR, s, IBMSG_T_SCOPE_LOCAL, 8);
    std::string ki = "IBMSG_" + tool_unique("i"), ku = tool_unique("u"), kd = tool_unique("d"),
                ks = tool_unique("s");
    for (char &c : ki) {
        c = (char)toupper((unsigned char)c); /* keys are case-insensitive */
    }

    ibmsg_info_t info;
    ASSERT_EQ(ibmsg_info_create(&info), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_append(info, "a bare string names nothing"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, ki.c_str(), -5), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_string(info, ku.c_str(), "77"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_double(info, kd.c_str(), 0.5), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_string(info, ks.c_str(), "text"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "not_a_cvar_at_all", 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_set_from_info(info), IBMSG_T_SUCCESS);
    EXPECT_EQ(i, -5);
    EXPECT_EQ(u, 77u);
    EXPECT_EQ(d, 0.5);
    EXPECT_STREQ(s, "text");

    /* An integral double sets an integer; others are errors; ints are range-checked. */
    ASSERT_EQ(ibmsg_info_set_double(info, ki.c_str(), 12.0), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_set_from_info(info), IBMSG_T_SUCCESS);
    EXPECT_EQ(i, 12);
    ASSERT_EQ(ibmsg_info_set_double(info, ki.c_str(), 12.5), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_cvar_set_from_info(info), IBMSG_T_ERR_INVALID);
    ASSERT_EQ(ibmsg_info_set_int(info, ki.c_str(), 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, ku.c_str(), -1), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_cvar_set_from_info(info), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(i, 1); /* set before the failing key */
    ASSERT_EQ(ibmsg_info_set_int(info, ku.c_str(), (int64_t)1 << 40), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_cvar_set_from_info(info), IBMSG_ERR_OUT_OF_RANGE);
    ASSERT_EQ(ibmsg_info_set_int(info, ku.c_str(), 3), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, ks.c_str(), 3), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_cvar_set_from_info(info), IBMSG_T_ERR_INVALID); /* a number for a string */
    ASSERT_EQ(ibmsg_info_free(&info), IBMSG_OK);
    EXPECT_EQ(ibmsg_t_cvar_set_from_info(IBMSG_INFO_NULL), IBMSG_T_ERR_INVALID);
}
