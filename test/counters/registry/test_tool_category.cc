/* Categories: the DAG, members in join order, the update number, roots, containing, flatten. */
#include "tool_fixture.h"

#include "counters/registry/tool_internal.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

class ToolCategory : public ToolTest
{
  public:
    int cat(const char *what, const char *parent_what = nullptr, const char *desc = nullptr)
    {
        std::string n = tool_unique(what);
        std::string p = parent_what != nullptr ? tool_unique(parent_what) : "";
        int index = -1;
        EXPECT_EQ(cnt_category_register(n.c_str(), desc, parent_what ? p.c_str() : nullptr, &index),
                  IBMSG_OK);
        return index;
    }
    int changed()
    {
        int v = -1;
        EXPECT_EQ(ibmsg_t_category_changed(&v), IBMSG_T_SUCCESS);
        return v;
    }
    std::vector<int> members(int (*fn)(int, int, int[]), int c, int n)
    {
        std::vector<int> v(n + 1, -7);
        EXPECT_EQ(fn(c, n, v.data()), IBMSG_T_SUCCESS);
        v.resize(n);
        return v;
    }
    unsigned long long src = 0;
    int cvar_value = 0;
};

TEST_F(ToolCategory, InfoIndexAndMembersInJoinOrder)
{
    int top = cat("top", nullptr, "the top");
    int sub = cat("sub", "top");
    std::string cn = tool_unique("cv");
    int cvar_src = 0, cv;
    cnt_cvar_desc_t cd = {};
    cd.name = cn.c_str();
    cd.datatype = IBMSG_T_INT;
    cd.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    cd.scope = IBMSG_T_SCOPE_LOCAL;
    std::string topname = tool_unique("top");
    cd.category = topname.c_str();
    cd.ctx = &cvar_src;
    ASSERT_EQ(cnt_cvar_register(&cd, &cv), IBMSG_OK);
    int p2 = add_pvar("p2", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, topname.c_str());
    int p1 = add_pvar("p1", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, topname.c_str());

    char name[128], desc[128];
    int nl = sizeof(name), dl = sizeof(desc), nc = -1, np = -1, ns = -1;
    ASSERT_EQ(ibmsg_t_category_get_info(top, name, &nl, desc, &dl, &nc, &np, &ns), IBMSG_T_SUCCESS);
    EXPECT_EQ(topname, name);
    EXPECT_STREQ(desc, "the top");
    EXPECT_EQ(nc, 1);
    EXPECT_EQ(np, 2);
    EXPECT_EQ(ns, 1);
    dl = sizeof(desc);
    ASSERT_EQ(
        ibmsg_t_category_get_info(sub, nullptr, nullptr, desc, &dl, nullptr, nullptr, nullptr),
        IBMSG_T_SUCCESS);
    EXPECT_EQ(dl, 1); /* no description: "" */
    nl = 0;
    ASSERT_EQ(
        ibmsg_t_category_get_info(top, name, &nl, nullptr, nullptr, nullptr, nullptr, nullptr),
        IBMSG_T_SUCCESS);
    EXPECT_EQ(nl, (int)topname.size() + 1);
    nl = 4;
    ASSERT_EQ(
        ibmsg_t_category_get_info(top, name, &nl, nullptr, nullptr, nullptr, nullptr, nullptr),
        IBMSG_T_SUCCESS);
    EXPECT_EQ(nl, 4);
    EXPECT_EQ(std::string(name), topname.substr(0, 3));

    EXPECT_EQ(members(ibmsg_t_category_get_pvars, top, 2), (std::vector<int>{p2, p1}));
    EXPECT_EQ(members(ibmsg_t_category_get_pvars, top, 1), (std::vector<int>{p2}));
    std::vector<int> v = {-7, -7, -7};
    ASSERT_EQ(ibmsg_t_category_get_pvars(top, 3, v.data()), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, (std::vector<int>{p2, p1, -7})); /* min(len, n) written */
    EXPECT_EQ(members(ibmsg_t_category_get_cvars, top, 1), (std::vector<int>{cv}));
    EXPECT_EQ(members(ibmsg_t_category_get_categories, top, 1), (std::vector<int>{sub}));
    ASSERT_EQ(ibmsg_t_category_get_events(top, 3, v.data()), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, (std::vector<int>{p2, p1, -7})); /* no events: nothing written */
    int ne = -1;
    ASSERT_EQ(ibmsg_t_category_get_num_events(top, &ne), IBMSG_T_SUCCESS);
    EXPECT_EQ(ne, 0);

    int index = -1;
    ASSERT_EQ(ibmsg_t_category_get_index(topname.c_str(), &index), IBMSG_T_SUCCESS);
    EXPECT_EQ(index, top);
    EXPECT_EQ(ibmsg_t_category_get_index("no such category", &index), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(ibmsg_t_category_get_index(nullptr, &index), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_get_index(topname.c_str(), nullptr), IBMSG_T_ERR_INVALID);

    int num;
    ASSERT_EQ(ibmsg_t_category_get_num(&num), IBMSG_T_SUCCESS);
    EXPECT_GT(num, sub);
    EXPECT_EQ(ibmsg_t_category_get_num(nullptr), IBMSG_T_ERR_INVALID);
    for (int bad : {-1, num}) {
        EXPECT_EQ(ibmsg_t_category_get_info(bad, nullptr, nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr),
                  IBMSG_T_ERR_INVALID_INDEX);
        EXPECT_EQ(ibmsg_t_category_get_pvars(bad, 0, nullptr), IBMSG_T_ERR_INVALID_INDEX);
        EXPECT_EQ(ibmsg_t_category_get_cvars(bad, 0, nullptr), IBMSG_T_ERR_INVALID_INDEX);
        EXPECT_EQ(ibmsg_t_category_get_categories(bad, 0, nullptr), IBMSG_T_ERR_INVALID_INDEX);
        EXPECT_EQ(ibmsg_t_category_get_events(bad, 0, nullptr), IBMSG_T_ERR_INVALID_INDEX);
        EXPECT_EQ(ibmsg_t_category_get_num_events(bad, &ne), IBMSG_T_ERR_INVALID_INDEX);
    }
    EXPECT_EQ(ibmsg_t_category_get_pvars(top, 2, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_get_pvars(top, -1, v.data()), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_get_num_events(top, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_changed(nullptr), IBMSG_T_ERR_INVALID);
}

TEST_F(ToolCategory, CyclesAreRejectedAndChangeNothing)
{
    int a = cat("a");
    int b = cat("b", "a");
    int c = cat("c", "b");
    int before = changed();
    EXPECT_EQ(cnt_category_add_category(c, a), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(cnt_category_add_category(b, b), IBMSG_T_ERR_INVALID);
    std::string an = tool_unique("a"), cn = tool_unique("c");
    int idx;
    EXPECT_EQ(cnt_category_register(an.c_str(), nullptr, cn.c_str(), &idx), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(changed(), before);
    int n = -1;
    ASSERT_EQ(
        ibmsg_t_category_get_info(c, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &n),
        IBMSG_T_SUCCESS);
    EXPECT_EQ(n, 0);
    /* A second path to the same category is fine: it is a DAG. */
    EXPECT_EQ(cnt_category_add_category(a, c), IBMSG_OK);
    EXPECT_EQ(cnt_category_add_category(a, c), IBMSG_OK); /* already there: no change */
    EXPECT_EQ(cnt_category_add_category(a, INT_MAX), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(cnt_category_register(tool_unique("x").c_str(), nullptr, "no such parent", &idx),
              IBMSG_T_ERR_INVALID_NAME);
    /* Registering an existing name returns it (and adds it under the parent). */
    EXPECT_EQ(cnt_category_register(cn.c_str(), nullptr, nullptr, &idx), IBMSG_OK);
    EXPECT_EQ(idx, c);
}

TEST_F(ToolCategory, ChangedGrowsOnEveryChange)
{
    int v0 = changed();
    int a = cat("a");
    int v1 = changed();
    EXPECT_GT(v1, v0); /* a category is added */
    int b = cat("b");
    int v2 = changed();
    EXPECT_GT(v2, v1);
    ASSERT_EQ(cnt_category_add_category(a, b), IBMSG_OK);
    int v3 = changed();
    EXPECT_GT(v3, v2); /* gains a subcategory */
    std::string an = tool_unique("a");
    int p = add_pvar("p", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, an.c_str());
    int v4 = changed();
    EXPECT_GT(v4, v3); /* a variable joins an existing category */
    ASSERT_EQ(cnt_category_add_pvar(b, p), IBMSG_OK);
    int v5 = changed();
    EXPECT_GT(v5, v4);
    ASSERT_EQ(cnt_category_add_pvar(b, p), IBMSG_OK); /* already a member */
    EXPECT_EQ(changed(), v5);
    /* The same for control variables. */
    int cv = add_cvar("cv", IBMSG_T_INT, &cvar_value, IBMSG_T_SCOPE_LOCAL, 1, IBMSG_T_ENUM_NULL,
                      nullptr, an.c_str());
    int v6 = changed();
    EXPECT_GT(v6, v5); /* a cvar joins an existing category */
    ASSERT_EQ(cnt_category_add_cvar(b, cv), IBMSG_OK);
    int v7 = changed();
    EXPECT_GT(v7, v6);
    ASSERT_EQ(cnt_category_add_cvar(b, cv), IBMSG_OK); /* already a member */
    EXPECT_EQ(changed(), v7);
    EXPECT_EQ(cnt_category_add_pvar(b, INT_MAX), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(cnt_category_add_cvar(b, INT_MAX), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(cnt_category_add_pvar(INT_MAX, p), IBMSG_T_ERR_INVALID_INDEX);
}

TEST_F(ToolCategory, ChangedSaturatesAtIntMax)
{
    int saved = changed();
    cnt_tool_test_set_category_changed(INT_MAX - 1);
    cat("a");
    EXPECT_EQ(changed(), INT_MAX);
    cat("b");
    EXPECT_EQ(changed(), INT_MAX);
    cnt_tool_test_set_category_changed(saved); /* later tests in this process expect growth */
}

TEST_F(ToolCategory, RootsAreIbmsgAndTestRoots)
{
    int r = cat("root");
    int child = cat("child", "root");
    int num = -1;
    ASSERT_EQ(ibmsg_t_category_get_roots(0, nullptr, &num), IBMSG_T_SUCCESS);
    std::vector<int> roots(num);
    ASSERT_EQ(ibmsg_t_category_get_roots(num, roots.data(), nullptr), IBMSG_T_SUCCESS);
    int ibmsg = -1;
    ASSERT_EQ(ibmsg_t_category_get_index("ibmsg", &ibmsg), IBMSG_T_SUCCESS);
    EXPECT_EQ(roots[0], ibmsg); /* registered first */
    EXPECT_NE(std::find(roots.begin(), roots.end(), r), roots.end());
    EXPECT_EQ(std::find(roots.begin(), roots.end(), child), roots.end());
    for (size_t i = 1; i < roots.size(); i++) {
        EXPECT_LT(roots[i - 1], roots[i]);
    }
    EXPECT_EQ(ibmsg_t_category_get_roots(2, nullptr, &num), IBMSG_T_ERR_INVALID);
}

TEST_F(ToolCategory, ContainingWalksTheDagUpwards)
{
    /*   top -> mid1 -> leaf, top -> mid2 -> leaf, other -> leaf; p in leaf and mid2. */
    int top = cat("top");
    int mid1 = cat("mid1", "top");
    int mid2 = cat("mid2", "top");
    int leaf = cat("leaf", "mid1");
    int other = cat("other");
    ASSERT_EQ(cnt_category_add_category(mid2, leaf), IBMSG_OK);
    ASSERT_EQ(cnt_category_add_category(other, leaf), IBMSG_OK);
    std::string ln = tool_unique("leaf");
    int p = add_pvar("p", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, ln.c_str());
    ASSERT_EQ(cnt_category_add_pvar(mid2, p), IBMSG_OK);

    int out[8], num = -1;
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_PVAR, p, 0, 8, out, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 2);
    EXPECT_EQ(out[0], leaf);
    EXPECT_EQ(out[1], mid2);
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_PVAR, p, 1, 8, out, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 5); /* leaf, mid2, then mid1, other, then top: nearest first, each once */
    EXPECT_EQ(std::vector<int>(out, out + 5), (std::vector<int>{leaf, mid2, mid1, other, top}));
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CATEGORY, leaf, 1, 2, out, &num),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 4);
    EXPECT_EQ(out[0], mid1);
    EXPECT_EQ(out[1], mid2);
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CATEGORY, top, 1, 8, out, &num),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 0);

    int log_level = -1, util = -1;
    ASSERT_EQ(ibmsg_t_cvar_get_index("log_level", &log_level), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("util", &util), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CVAR, log_level, 0, 8, out, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 1);
    EXPECT_EQ(out[0], util);

    EXPECT_EQ(ibmsg_t_category_get_containing(99, p, 0, 8, out, &num), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_PVAR, INT_MAX, 0, 8, out, &num),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CVAR, -1, 0, 8, out, &num),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CATEGORY, INT_MAX, 0, 8, out, &num),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_PVAR, p, 0, 8, nullptr, &num),
              IBMSG_T_ERR_INVALID);
}

TEST_F(ToolCategory, FlattenIsDepthFirstInMemberOrderWithoutDuplicates)
{
    /* top: p1, [a: p2, p3, [b: p1, p4]], [c: p3, p5] */
    int top = cat("top");
    int a = cat("a", "top");
    int b = cat("b", "a");
    int c = cat("c", "top");
    std::string tn = tool_unique("top"), an = tool_unique("a"), bn = tool_unique("b"),
                cn = tool_unique("c");
    int p1 = add_pvar("p1", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, tn.c_str());
    int p2 = add_pvar("p2", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, an.c_str());
    int p3 = add_pvar("p3", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, an.c_str());
    ASSERT_EQ(cnt_category_add_pvar(b, p1), IBMSG_OK);
    int p4 = add_pvar("p4", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, bn.c_str());
    ASSERT_EQ(cnt_category_add_pvar(c, p3), IBMSG_OK);
    int p5 = add_pvar("p5", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED, &src, 0, cn.c_str());

    int out[16], num = -1;
    ASSERT_EQ(ibmsg_t_category_flatten(top, IBMSG_T_KIND_PVAR, 16, out, &num), IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 5);
    EXPECT_EQ(std::vector<int>(out, out + 5), (std::vector<int>{p1, p2, p3, p4, p5}));
    ASSERT_EQ(ibmsg_t_category_flatten(a, IBMSG_T_KIND_PVAR, 2, out, &num), IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 4);
    EXPECT_EQ(out[0], p2);
    EXPECT_EQ(out[1], p3);
    ASSERT_EQ(ibmsg_t_category_flatten(top, IBMSG_T_KIND_CVAR, 16, out, &num), IBMSG_T_SUCCESS);
    EXPECT_EQ(num, 0);

    /* The whole tree under ibmsg holds the registry's own cvar. */
    int ibmsg, log_level;
    ASSERT_EQ(ibmsg_t_category_get_index("ibmsg", &ibmsg), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_get_index("log_level", &log_level), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_flatten(ibmsg, IBMSG_T_KIND_CVAR, 16, out, &num), IBMSG_T_SUCCESS);
    ASSERT_GE(num, 1);
    EXPECT_EQ(out[0], log_level);

    EXPECT_EQ(ibmsg_t_category_flatten(top, IBMSG_T_KIND_CATEGORY, 16, out, &num),
              IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_flatten(top, 0, 16, out, &num), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_category_flatten(INT_MAX, IBMSG_T_KIND_PVAR, 16, out, &num),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_category_flatten(top, IBMSG_T_KIND_PVAR, 1, nullptr, &num),
              IBMSG_T_ERR_INVALID);
}
