/* Life cycle: reference-counted init, NOT_INITIALIZED outside, stable indices across re-init. */
#include "tool_fixture.h"

#include <string>

TEST(ToolState, EveryCallOutsideInitIsNotInitialized)
{
    int i = 0, len = 0, n = 0;
    long long ll = 0;
    ibmsg_t_pvar_session_t s = IBMSG_T_PVAR_SESSION_NULL;
    ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
    ibmsg_t_cvar_handle_t ch = IBMSG_T_CVAR_HANDLE_NULL;
    const int NI = IBMSG_T_ERR_NOT_INITIALIZED;

    EXPECT_EQ(ibmsg_t_finalize(), NI);
    EXPECT_EQ(ibmsg_t_cvar_get_num(&n), NI);
    EXPECT_EQ(ibmsg_t_cvar_get_info(0, nullptr, &len, nullptr, nullptr, nullptr, nullptr, &len,
                                    nullptr, nullptr),
              NI);
    EXPECT_EQ(ibmsg_t_cvar_get_index("log_level", &i), NI);
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(0, nullptr, &ch, &n), NI);
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&ch), NI);
    EXPECT_EQ(ibmsg_t_cvar_read(ch, &i), NI);
    EXPECT_EQ(ibmsg_t_cvar_write(ch, &i), NI);
    EXPECT_EQ(ibmsg_t_cvar_set_from_info(IBMSG_INFO_NULL), NI);
    EXPECT_EQ(ibmsg_t_pvar_get_num(&n), NI);
    EXPECT_EQ(ibmsg_t_pvar_get_info(0, nullptr, &len, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    &len, nullptr, nullptr, nullptr, nullptr),
              NI);
    EXPECT_EQ(ibmsg_t_pvar_get_index("tool_handle_allocs", IBMSG_T_PVAR_CLASS_COUNTER, &i), NI);
    EXPECT_EQ(ibmsg_t_pvar_session_create(&s), NI);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&s), NI);
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, 0, nullptr, &h, &n), NI);
    EXPECT_EQ(ibmsg_t_pvar_handle_free(s, &h), NI);
    EXPECT_EQ(ibmsg_t_pvar_start(s, h), NI);
    EXPECT_EQ(ibmsg_t_pvar_stop(s, h), NI);
    EXPECT_EQ(ibmsg_t_pvar_read(s, h, &ll), NI);
    EXPECT_EQ(ibmsg_t_pvar_write(s, h, &ll), NI);
    EXPECT_EQ(ibmsg_t_pvar_reset(s, h), NI);
    EXPECT_EQ(ibmsg_t_pvar_readreset(s, h, &ll), NI);
    EXPECT_EQ(ibmsg_t_pvar_start_list(s, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_pvar_stop_list(s, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_pvar_reset_list(s, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_pvar_filter(0, nullptr, IBMSG_T_ANY, IBMSG_T_ANY, 0, nullptr, &n), NI);
    EXPECT_EQ(ibmsg_t_enum_get_info(IBMSG_T_ENUM_NULL, &n, nullptr, &len), NI);
    EXPECT_EQ(ibmsg_t_enum_get_item(IBMSG_T_ENUM_NULL, 0, &i, nullptr, &len), NI);
    EXPECT_EQ(ibmsg_t_category_get_num(&n), NI);
    EXPECT_EQ(ibmsg_t_category_get_info(0, nullptr, &len, nullptr, &len, &n, &n, &n), NI);
    EXPECT_EQ(ibmsg_t_category_get_num_events(0, &n), NI);
    EXPECT_EQ(ibmsg_t_category_get_index("ibmsg", &i), NI);
    EXPECT_EQ(ibmsg_t_category_get_cvars(0, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_category_get_pvars(0, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_category_get_events(0, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_category_get_categories(0, 0, nullptr), NI);
    EXPECT_EQ(ibmsg_t_category_changed(&n), NI);
    EXPECT_EQ(ibmsg_t_category_get_roots(0, nullptr, &n), NI);
    EXPECT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CATEGORY, 0, 0, 0, nullptr, &n), NI);
    EXPECT_EQ(ibmsg_t_category_flatten(0, IBMSG_T_KIND_PVAR, 0, nullptr, &n), NI);
    EXPECT_EQ(ibmsg_t_event_get_num(&n), NI);
    EXPECT_EQ(ibmsg_t_event_get_info(0, nullptr, &len, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, &len, nullptr),
              NI);
    EXPECT_EQ(ibmsg_t_event_get_index("x", &i), NI);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(0, nullptr, IBMSG_INFO_NULL, nullptr), NI);
    EXPECT_EQ(ibmsg_t_event_handle_free(IBMSG_T_EVENT_REGISTRATION_NULL, nullptr, nullptr), NI);
    EXPECT_EQ(ibmsg_t_event_register_callback(IBMSG_T_EVENT_REGISTRATION_NULL,
                                              IBMSG_T_CB_REQUIRE_NONE, IBMSG_INFO_NULL, nullptr,
                                              nullptr),
              NI);
    EXPECT_EQ(ibmsg_t_event_set_dropped_handler(IBMSG_T_EVENT_REGISTRATION_NULL, nullptr), NI);
    EXPECT_EQ(ibmsg_t_source_get_num(&n), NI);
    EXPECT_EQ(ibmsg_t_source_get_info(0, nullptr, &len, nullptr, &len, nullptr, nullptr, nullptr,
                                      nullptr),
              NI);
    EXPECT_EQ(ibmsg_t_source_get_timestamp(0, &ll), NI);
}

TEST(ToolState, InitIsReferenceCounted)
{
    int provided = -1, n;
    EXPECT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided), IBMSG_T_SUCCESS);
    EXPECT_EQ(provided, IBMSG_T_THREAD_MULTIPLE);
    EXPECT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_FUNNELED, &provided), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_get_num(&n), IBMSG_T_SUCCESS); /* one init still open */
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_get_num(&n), IBMSG_T_ERR_NOT_INITIALIZED);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_ERR_NOT_INITIALIZED);
}

TEST(ToolState, InitNeedsProvided)
{
    EXPECT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, nullptr), IBMSG_T_ERR_INVALID);
    int n;
    EXPECT_EQ(ibmsg_t_pvar_get_num(&n), IBMSG_T_ERR_NOT_INITIALIZED);
}

TEST(ToolState, IndicesNamesAndEnumsSurviveReinit)
{
    int provided, index = -1, again = -1, n1, n2, cat = -1, cat2 = -1;
    ibmsg_t_enum_t e1, e2;
    char name[64];
    int len = sizeof(name);

    /* Registration works before any init. */
    std::string pname = tool_unique("p");
    unsigned long long src = 0;
    cnt_pvar_desc_t d = {};
    d.name = pname.c_str();
    d.var_class = IBMSG_T_PVAR_CLASS_COUNTER;
    d.datatype = IBMSG_T_UNSIGNED_LONG_LONG;
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.ctx = &src;
    ASSERT_EQ(cnt_pvar_register(&d, &index), IBMSG_OK);

    ASSERT_EQ(ibmsg_t_init_thread(0, &provided), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_get_num(&n1), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("tool", &cat), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_get_info(0, nullptr, nullptr, nullptr, nullptr, &e1, nullptr, nullptr,
                                    nullptr, nullptr),
              IBMSG_T_SUCCESS);
    ibmsg_t_pvar_session_t s;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS); /* frees the session left open */

    ASSERT_EQ(ibmsg_t_init_thread(0, &provided), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_ERR_INVALID_SESSION);
    ASSERT_EQ(ibmsg_t_pvar_get_num(&n2), IBMSG_T_SUCCESS);
    EXPECT_EQ(n1, n2);
    ASSERT_EQ(ibmsg_t_pvar_get_index(pname.c_str(), IBMSG_T_PVAR_CLASS_COUNTER, &again),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(again, index);
    ASSERT_EQ(ibmsg_t_pvar_get_info(index, name, &len, nullptr, nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(pname, name);
    ASSERT_EQ(ibmsg_t_category_get_index("tool", &cat2), IBMSG_T_SUCCESS);
    EXPECT_EQ(cat, cat2);
    ASSERT_EQ(ibmsg_t_cvar_get_info(0, nullptr, nullptr, nullptr, nullptr, &e2, nullptr, nullptr,
                                    nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(e1, e2);
    EXPECT_EQ(ibmsg_t_enum_get_info(e2, &n1, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}

TEST(ToolState, LastFinalizeFreesOpenHandles)
{
    int provided, count, index = -1;
    ibmsg_t_pvar_session_t s;
    ibmsg_t_pvar_handle_t h;
    ibmsg_t_cvar_handle_t ch;

    ASSERT_EQ(ibmsg_t_init_thread(0, &provided), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_get_index("tool_handles_alive", IBMSG_T_PVAR_CLASS_LEVEL, &index),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(0, nullptr, &ch, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);

    ASSERT_EQ(ibmsg_t_init_thread(0, &provided), IBMSG_T_SUCCESS);
    unsigned long long v = 99;
    EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_ERR_INVALID_SESSION);
    int i;
    EXPECT_EQ(ibmsg_t_cvar_read(ch, &i), IBMSG_T_ERR_INVALID_HANDLE);
    ibmsg_t_pvar_session_t s2;
    ibmsg_t_pvar_handle_t h2;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s2), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s2, index, nullptr, &h2, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_read(s2, h2, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 1u); /* only h2: finalize freed h */
    EXPECT_EQ(ibmsg_t_pvar_session_free(&s2), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}
