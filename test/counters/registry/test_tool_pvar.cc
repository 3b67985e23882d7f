/* pvar registration rules, get_info/get_index and the string conventions, pvar_filter. */
#include "tool_fixture.h"

#include <climits>
#include <cstring>
#include <string>

class ToolPvar : public ToolTest
{
  public:
    cnt_pvar_desc_t desc(const std::string &name, int var_class = IBMSG_T_PVAR_CLASS_COUNTER,
                         ibmsg_t_datatype_t dt = IBMSG_T_UNSIGNED_LONG_LONG)
    {
        cnt_pvar_desc_t d = {};
        d.name = name.c_str();
        d.var_class = var_class;
        d.datatype = dt;
        d.verbosity = IBMSG_T_VERBOSITY_TUNER_BASIC;
        d.ctx = &src;
        return d;
    }
    unsigned long long src = 0;
};

TEST_F(ToolPvar, RegistrationValidatesTheDescription)
{
    std::string n = tool_unique("v");
    int index;
    cnt_pvar_desc_t d = desc(n, IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_INT);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID); /* counters are unsigned */
    d = desc(n, IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_DOUBLE);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n, IBMSG_T_PVAR_CLASS_PERCENTAGE, IBMSG_T_INT);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n, IBMSG_T_PVAR_CLASS_TIMER, IBMSG_T_CHAR);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n, 12345);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n, IBMSG_T_PVAR_CLASS_LEVEL, IBMSG_T_DATATYPE_NULL);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n);
    d.bind = IBMSG_T_BIND_LAST;
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n);
    d.flags = 1u << 7;
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n);
    d.ctx = nullptr; /* nothing to read */
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n);
    d.verbosity = 0;
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    std::string empty;
    d = desc(empty);
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_ERR_INVALID);
    d = desc(n);
    d.category = "no_such_category_anywhere";
    EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(cnt_pvar_register(nullptr, &index), IBMSG_ERR_INVALID);
    d = desc(n);
    EXPECT_EQ(cnt_pvar_register(&d, nullptr), IBMSG_ERR_INVALID);
    int num;
    ASSERT_EQ(ibmsg_t_pvar_get_num(&num), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_get_index(n.c_str(), IBMSG_T_PVAR_CLASS_COUNTER, &index),
              IBMSG_T_ERR_INVALID_NAME); /* nothing was registered */
}

TEST_F(ToolPvar, SameNameIsIdempotentPerClass)
{
    std::string n = tool_unique("v");
    int a, b, c, num1, num2;
    cnt_pvar_desc_t d = desc(n);
    ASSERT_EQ(cnt_pvar_register(&d, &a), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_pvar_get_num(&num1), IBMSG_T_SUCCESS);
    unsigned long long other = 0;
    d.ctx = &other; /* a second context: same variable */
    ASSERT_EQ(cnt_pvar_register(&d, &b), IBMSG_OK);
    EXPECT_EQ(a, b);
    ASSERT_EQ(ibmsg_t_pvar_get_num(&num2), IBMSG_T_SUCCESS);
    EXPECT_EQ(num1, num2);
    d.desc = "something else";
    EXPECT_EQ(cnt_pvar_register(&d, &b), IBMSG_ERR_EXISTS);
    d = desc(n);
    d.flags = CNT_PVAR_READONLY;
    EXPECT_EQ(cnt_pvar_register(&d, &b), IBMSG_ERR_EXISTS);

    /* The same name in another class is another variable. */
    d = desc(n, IBMSG_T_PVAR_CLASS_LEVEL);
    ASSERT_EQ(cnt_pvar_register(&d, &c), IBMSG_OK);
    EXPECT_NE(a, c);
    int ia, ic;
    ASSERT_EQ(ibmsg_t_pvar_get_index(n.c_str(), IBMSG_T_PVAR_CLASS_COUNTER, &ia), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_get_index(n.c_str(), IBMSG_T_PVAR_CLASS_LEVEL, &ic), IBMSG_T_SUCCESS);
    EXPECT_EQ(ia, a);
    EXPECT_EQ(ic, c);
    EXPECT_EQ(ibmsg_t_pvar_get_index(n.c_str(), IBMSG_T_PVAR_CLASS_TIMER, &ia),
              IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(ibmsg_t_pvar_get_index(n.c_str(), 7, &ia), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(ibmsg_t_pvar_get_index(nullptr, IBMSG_T_PVAR_CLASS_LEVEL, &ia), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_get_index(n.c_str(), IBMSG_T_PVAR_CLASS_LEVEL, nullptr),
              IBMSG_T_ERR_INVALID);
}

TEST_F(ToolPvar, GetInfoReportsEverythingAndFollowsTheStringConvention)
{
    std::string n = tool_unique("v");
    int index;
    cnt_pvar_desc_t d = desc(n, IBMSG_T_PVAR_CLASS_TIMER, IBMSG_T_DOUBLE);
    double dsrc = 0;
    d.ctx = &dsrc;
    d.bind = IBMSG_T_BIND_ENDPOINT;
    d.flags = CNT_PVAR_READONLY | CNT_PVAR_ATOMIC;
    d.desc = "seconds in flight";
    ASSERT_EQ(cnt_pvar_register(&d, &index), IBMSG_OK);

    char name[256], dsc[256];
    int name_len = sizeof(name), desc_len = sizeof(dsc), verb, cls, bind, ro, cont, at;
    ibmsg_t_datatype_t dt;
    ibmsg_t_enum_t et = (ibmsg_t_enum_t)1;
    ASSERT_EQ(ibmsg_t_pvar_get_info(index, name, &name_len, &verb, &cls, &dt, &et, dsc, &desc_len,
                                    &bind, &ro, &cont, &at),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(n, name);
    EXPECT_EQ(name_len, (int)n.size() + 1);
    EXPECT_STREQ(dsc, "seconds in flight");
    EXPECT_EQ(desc_len, 18);
    EXPECT_EQ(verb, IBMSG_T_VERBOSITY_TUNER_BASIC);
    EXPECT_EQ(cls, IBMSG_T_PVAR_CLASS_TIMER);
    EXPECT_EQ(dt, IBMSG_T_DOUBLE);
    EXPECT_EQ(et, IBMSG_T_ENUM_NULL);
    EXPECT_EQ(bind, IBMSG_T_BIND_ENDPOINT);
    EXPECT_EQ(ro, 1);
    EXPECT_EQ(cont, 0);
    EXPECT_EQ(at, 1);

    /* Length query with a NULL buffer, and with *len == 0. */
    name_len = 0;
    desc_len = 5;
    ASSERT_EQ(ibmsg_t_pvar_get_info(index, nullptr, &name_len, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, &desc_len, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(name_len, (int)n.size() + 1);
    EXPECT_EQ(desc_len, 18);
    /* Exact buffer, then truncation. */
    std::memset(name, 'x', sizeof(name));
    name_len = (int)n.size() + 1;
    ASSERT_EQ(ibmsg_t_pvar_get_info(index, name, &name_len, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(n, name);
    desc_len = 8;
    std::memset(dsc, 'x', sizeof(dsc));
    ASSERT_EQ(ibmsg_t_pvar_get_info(index, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    dsc, &desc_len, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(desc_len, 8);
    EXPECT_STREQ(dsc, "seconds");
    EXPECT_EQ(dsc[8], 'x');

    /* No description: the empty string. */
    std::string n2 = tool_unique("nodesc");
    d = desc(n2);
    ASSERT_EQ(cnt_pvar_register(&d, &index), IBMSG_OK);
    desc_len = sizeof(dsc);
    ASSERT_EQ(ibmsg_t_pvar_get_info(index, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    dsc, &desc_len, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(desc_len, 1);
    EXPECT_STREQ(dsc, "");

    int num;
    ASSERT_EQ(ibmsg_t_pvar_get_num(&num), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_get_info(num, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_pvar_get_info(-1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_pvar_get_num(nullptr), IBMSG_T_ERR_INVALID);
}

TEST_F(ToolPvar, FilterKeepsClassAndBindingInOrderWithoutDuplicates)
{
    int c1, l1, c2, t1;
    cnt_pvar_desc_t d;
    std::string n1 = tool_unique("c1"), n2 = tool_unique("l1"), n3 = tool_unique("c2"),
                n4 = tool_unique("t1");
    d = desc(n1);
    ASSERT_EQ(cnt_pvar_register(&d, &c1), IBMSG_OK);
    d = desc(n2, IBMSG_T_PVAR_CLASS_LEVEL);
    ASSERT_EQ(cnt_pvar_register(&d, &l1), IBMSG_OK);
    d = desc(n3);
    d.bind = IBMSG_T_BIND_CONTEXT;
    ASSERT_EQ(cnt_pvar_register(&d, &c2), IBMSG_OK);
    d = desc(n4, IBMSG_T_PVAR_CLASS_TIMER);
    ASSERT_EQ(cnt_pvar_register(&d, &t1), IBMSG_OK);

    int in[] = {t1, c2, l1, c1, c2, t1};
    int out[8], num = -1;
    ASSERT_EQ(ibmsg_t_pvar_filter(6, in, IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_ANY, 8, out, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 2);
    EXPECT_EQ(out[0], c2);
    EXPECT_EQ(out[1], c1);
    ASSERT_EQ(ibmsg_t_pvar_filter(6, in, IBMSG_T_ANY, IBMSG_T_BIND_NO_OBJECT, 8, out, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 3);
    EXPECT_EQ(out[0], t1);
    EXPECT_EQ(out[1], l1);
    EXPECT_EQ(out[2], c1);
    ASSERT_EQ(ibmsg_t_pvar_filter(6, in, IBMSG_T_ANY, IBMSG_T_ANY, 2, out, &num), IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 4); /* the total, though only two were written */
    ASSERT_EQ(ibmsg_t_pvar_filter(6, in, IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_BIND_CONTEXT, 0,
                                  nullptr, &num),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 1);

    EXPECT_EQ(ibmsg_t_pvar_filter(6, in, 999, IBMSG_T_ANY, 8, out, &num), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_filter(6, in, IBMSG_T_ANY, IBMSG_T_BIND_LAST, 8, out, &num),
              IBMSG_T_ERR_INVALID);
    int bad[] = {c1, INT_MAX};
    EXPECT_EQ(ibmsg_t_pvar_filter(2, bad, IBMSG_T_ANY, IBMSG_T_ANY, 8, out, &num),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_pvar_filter(2, nullptr, IBMSG_T_ANY, IBMSG_T_ANY, 8, out, &num),
              IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_filter(2, in, IBMSG_T_ANY, IBMSG_T_ANY, 8, nullptr, &num),
              IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_pvar_filter(-1, in, IBMSG_T_ANY, IBMSG_T_ANY, 8, out, &num),
              IBMSG_T_ERR_INVALID);
}
