// perf/tools/lib: the command line (every documented flag, every refusal) and the latency
// statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <cstdio>
#include <list>
#include <string>
#include <vector>

extern "C" {
#include "core/config.h"
#include "perf/tools/lib/perf.h"
#include "perf/tools/lib/stamp.h"
}

namespace
{

struct Parsed {
    int ret;
    perf_options_t opts;
    std::string out, err;
};

std::string slurp(FILE *f)
{
    std::string s;
    char buf[4096];
    size_t n;
    rewind(f);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        s.append(buf, n);
    }
    fclose(f);
    return s;
}

// The options point into argv, as they do into a process's: keep every argument alive.
std::list<std::string> keep_args;

Parsed parse(perf_test_t test, std::vector<std::string> args)
{
    Parsed p{};
    std::vector<char *> argv;
    args.insert(args.begin(), test == PERF_TEST_SEND_BW ? "ibmsg_send_bw" : "ibmsg_send_lat");
    for (auto &a : args) {
        keep_args.push_back(a);
        argv.push_back(keep_args.back().data());
    }
    argv.push_back(nullptr);
    FILE *out = tmpfile(), *err = tmpfile();
    p.ret = perf_options_parse(&p.opts, test, (int)args.size(), argv.data(), out, err);
    p.out = slurp(out);
    p.err = slurp(err);
    return p;
}

TEST(PerfOptions, DefaultsAreServerWithPerftestValues)
{
    Parsed p = parse(PERF_TEST_SEND_BW, {});
    ASSERT_EQ(p.ret, 0) << p.err;
    EXPECT_EQ(p.opts.host, nullptr);
    EXPECT_EQ(p.opts.size, 65536u);
    EXPECT_EQ(p.opts.iters, 1000);
    EXPECT_EQ(p.opts.tcp_port, 18515);
    EXPECT_EQ(p.opts.tx_depth, 128);
    EXPECT_EQ(p.opts.rx_depth, 512);
    EXPECT_FALSE(p.opts.counters);
    Parsed l = parse(PERF_TEST_SEND_LAT, {});
    ASSERT_EQ(l.ret, 0);
    EXPECT_EQ(l.opts.size, 2u);
}

TEST(PerfOptions, EveryDocumentedBwFlag)
{
    Parsed p = parse(PERF_TEST_SEND_BW, {"-d",
                                         "rxe0",
                                         "-i",
                                         "1",
                                         "-x",
                                         "1",
                                         "-p",
                                         "20000",
                                         "-s",
                                         "4096",
                                         "-n",
                                         "77",
                                         "-t",
                                         "64",
                                         "-r",
                                         "256",
                                         "-Q",
                                         "16",
                                         "-I",
                                         "64",
                                         "-l",
                                         "8",
                                         "-F",
                                         "-u",
                                         "18",
                                         "--report_gbits",
                                         "--output=message_rate",
                                         "--counters=core,nic",
                                         "--json",
                                         "out.json",
                                         "10.0.0.1"});
    ASSERT_EQ(p.ret, 0) << p.err;
    const perf_options_t &o = p.opts;
    EXPECT_STREQ(o.device, "rxe0");
    EXPECT_EQ(o.ib_port, 1);
    EXPECT_EQ(o.gid_index, 1);
    EXPECT_EQ(o.qp_timeout, 18);
    EXPECT_EQ(o.tcp_port, 20000);
    EXPECT_EQ(o.size, 4096u);
    EXPECT_EQ(o.iters, 77);
    EXPECT_EQ(o.tx_depth, 64);
    EXPECT_EQ(o.rx_depth, 256);
    EXPECT_EQ(o.cq_mod, 16);
    EXPECT_EQ(o.inline_size, 64);
    EXPECT_EQ(o.post_list, 8);
    EXPECT_TRUE(o.cpu_freq_ok);
    EXPECT_TRUE(o.report_gbits);
    EXPECT_EQ(o.output, PERF_OUTPUT_MESSAGE_RATE);
    EXPECT_TRUE(o.counters);
    EXPECT_STREQ(o.counter_categories, "core,nic");
    EXPECT_STREQ(o.json_path, "out.json");
    EXPECT_STREQ(o.host, "10.0.0.1");
}

TEST(PerfOptions, AllDurationCountersAndLongForms)
{
    Parsed a = parse(PERF_TEST_SEND_BW, {"-a", "--counters", "--output=bandwidth"});
    ASSERT_EQ(a.ret, 0) << a.err;
    EXPECT_TRUE(a.opts.all_sizes);
    EXPECT_TRUE(a.opts.counters);
    EXPECT_STREQ(a.opts.counter_categories, "");
    EXPECT_EQ(a.opts.output, PERF_OUTPUT_BANDWIDTH);
    EXPECT_EQ(a.opts.qp_timeout, -1); // not given: the library's verbs_timeout
    Parsed d = parse(PERF_TEST_SEND_LAT, {"-D", "3", "--output=latency", "--counters=papi"});
    ASSERT_EQ(d.ret, 0) << d.err;
    EXPECT_EQ(d.opts.duration, 3);
    EXPECT_EQ(d.opts.output, PERF_OUTPUT_LATENCY);
    Parsed l = parse(PERF_TEST_SEND_LAT, {"--ib-dev=rxe1", "--size=8", "--iters=50", "--all=x"});
    EXPECT_EQ(l.ret, PERF_PARSE_ERROR); // --all takes no value
    l = parse(PERF_TEST_SEND_LAT,
              {"--ib-dev=rxe1", "--size=8", "--iters=50", "-Q", "4", "-I", "0", "host"});
    ASSERT_EQ(l.ret, 0) << l.err;
    EXPECT_STREQ(l.opts.device, "rxe1");
    EXPECT_EQ(l.opts.size, 8u);
    EXPECT_EQ(l.opts.iters, 50);
    EXPECT_EQ(l.opts.inline_size, 0);
}

// perftest's flags become the library's hints by name (a misspelt key would be ignored there).
TEST(PerfOptions, FlagsBecomeLibraryHints)
{
    Parsed p = parse(PERF_TEST_SEND_BW, {"-u", "18", "-x", "3", "-t", "64", "-l", "8"});
    ASSERT_EQ(p.ret, 0) << p.err;
    ibmsg_info_t info;
    ASSERT_EQ(perf_options_info(&p.opts, &info), IBMSG_OK);
    int64_t v = 0;
    EXPECT_EQ(ibmsg_info_get_int(info, "verbs_timeout", &v), IBMSG_OK);
    EXPECT_EQ(v, 18);
    EXPECT_EQ(ibmsg_info_get_int(info, "gid_index", &v), IBMSG_OK);
    EXPECT_EQ(v, 3);
    EXPECT_EQ(ibmsg_info_get_int(info, "core_sq_depth", &v), IBMSG_OK);
    EXPECT_EQ(v, 64);
    EXPECT_EQ(ibmsg_info_get_int(info, "core_send_batch", &v), IBMSG_OK);
    EXPECT_EQ(v, 8);
    ibmsg_info_free(&info);
    // Each key is one of the library's settings, and the value in its range.
    EXPECT_TRUE(core_config_check("verbs_timeout", 18));
    EXPECT_TRUE(core_config_check("gid_index", 3));
    EXPECT_TRUE(core_config_check("core_sq_depth", 64));
    EXPECT_TRUE(core_config_check("core_send_batch", 8));
    Parsed d = parse(PERF_TEST_SEND_LAT, {});
    ASSERT_EQ(d.ret, 0) << d.err;
    ASSERT_EQ(perf_options_info(&d.opts, &info), IBMSG_OK);
    EXPECT_EQ(ibmsg_info_get_int(info, "verbs_timeout", &v), IBMSG_ERR_NOT_FOUND); // the library's
    EXPECT_EQ(ibmsg_info_get_int(info, "core_sq_depth", &v), IBMSG_ERR_NOT_FOUND);
    ibmsg_info_free(&info);
}

TEST(PerfOptions, HelpPrintsUsage)
{
    Parsed p = parse(PERF_TEST_SEND_BW, {"-h"});
    EXPECT_EQ(p.ret, PERF_PARSE_HELP);
    EXPECT_NE(p.out.find("--report_gbits"), std::string::npos);
    EXPECT_NE(p.out.find("rendezvous"), std::string::npos);
    Parsed l = parse(PERF_TEST_SEND_LAT, {"--help"});
    EXPECT_EQ(l.ret, PERF_PARSE_HELP);
    EXPECT_NE(l.out.find("Not for latency"), std::string::npos);
}

struct Bad {
    perf_test_t test;
    std::vector<std::string> args;
    const char *message;
};

TEST(PerfOptions, BadFlagsAreRefusedWithAMessage)
{
    const Bad cases[] = {
        {PERF_TEST_SEND_BW, {"-z"}, "unknown option -z"},
        {PERF_TEST_SEND_BW, {"--bogus"}, "unknown option --bogus"},
        {PERF_TEST_SEND_BW, {"-R"}, "unknown option -R"},
        {PERF_TEST_SEND_BW, {"-s"}, "needs a value"},
        {PERF_TEST_SEND_BW, {"-u", "0"}, "invalid value '0' for -u"},
        {PERF_TEST_SEND_LAT, {"--qp-timeout=32"}, "invalid value '32' for -u"},
        {PERF_TEST_SEND_BW, {"-s", "0"}, "invalid value '0' for -s"},
        {PERF_TEST_SEND_BW, {"-s", "12k"}, "invalid value '12k' for -s"},
        {PERF_TEST_SEND_BW, {"-s", "16777216"}, "invalid value"},
        {PERF_TEST_SEND_BW, {"-n", "-3"}, "invalid value '-3' for -n"},
        {PERF_TEST_SEND_LAT, {"-n", "2"}, "invalid value '2' for -n"},
        {PERF_TEST_SEND_BW, {"-p", "70000"}, "invalid value '70000' for -p"},
        {PERF_TEST_SEND_BW, {"-t", "0"}, "for -t"},
        {PERF_TEST_SEND_BW, {"-x", "abc"}, "for -x"},
        {PERF_TEST_SEND_BW, {"-a", "-s", "8"}, "-a and -s conflict"},
        {PERF_TEST_SEND_BW, {"-D", "2", "-n", "10"}, "-D and -n conflict"},
        {PERF_TEST_SEND_BW, {"-D", "2", "-a"}, "-D and -a conflict"},
        {PERF_TEST_SEND_LAT, {"-t", "4"}, "-t does not apply to a latency test"},
        {PERF_TEST_SEND_LAT, {"-r", "4"}, "-r does not apply to a latency test"},
        {PERF_TEST_SEND_LAT, {"--report_gbits"}, "--report_gbits does not apply"},
        {PERF_TEST_SEND_LAT, {"--output=bandwidth"}, "does not apply to a latency test"},
        {PERF_TEST_SEND_BW, {"--output=latency"}, "does not apply to a bandwidth test"},
        {PERF_TEST_SEND_BW, {"--output=speed"}, "--output must be"},
        {PERF_TEST_SEND_BW, {"--counters=core,disk"}, "unknown category 'disk'"},
        {PERF_TEST_SEND_BW, {"--json="}, "--json needs"},
        {PERF_TEST_SEND_BW, {"--json=-", "--output=bandwidth"}, "both want stdout"},
        {PERF_TEST_SEND_BW, {"host1", "host2"}, "unexpected argument 'host2'"},
        {PERF_TEST_SEND_BW, {"-d", ""}, "invalid device name for -d"},
        {PERF_TEST_SEND_BW, {"-i", "0"}, "invalid value '0' for -i"},
        {PERF_TEST_SEND_LAT, {"-x", "256"}, "invalid value '256' for -x"},
        {PERF_TEST_SEND_BW, {"-D", "0"}, "invalid value '0' for -D"},
        {PERF_TEST_SEND_BW, {"-r", "0"}, "for -r"},
        {PERF_TEST_SEND_BW, {"-Q", "0"}, "invalid value '0' for -Q"},
        {PERF_TEST_SEND_LAT, {"-I", "2000"}, "invalid value '2000' for -I"},
        {PERF_TEST_SEND_BW, {"-l", "0"}, "invalid value '0' for -l"},
        {PERF_TEST_SEND_BW, {"--post_list=65"}, "invalid value '65' for -l"},
        {PERF_TEST_SEND_LAT, {"-l", "4"}, "-l does not apply to a latency test"},
        {PERF_TEST_WRITE_BW, {"-l", "4"}, "-l does not apply to a write test"},
        {PERF_TEST_SEND_LAT, {"--output"}, "needs a value"},
    };
    for (const Bad &c : cases) {
        Parsed p = parse(c.test, c.args);
        std::string line;
        for (auto &a : c.args) {
            line += a + " ";
        }
        EXPECT_EQ(p.ret, PERF_PARSE_ERROR) << line;
        EXPECT_NE(p.err.find(c.message), std::string::npos) << line << ": " << p.err;
    }
}

TEST(PerfStats, PerftestStatistics)
{
    // 10 samples; the two largest (1000, 900) are dropped, 8 remain: 1..8.
    std::vector<double> s = {5, 1000, 3, 8, 1, 900, 7, 2, 6, 4};
    perf_lat_stats_t st;
    perf_lat_stats(s.data(), s.size(), &st);
    EXPECT_EQ(st.samples, 8u);
    EXPECT_DOUBLE_EQ(st.min, 1);
    EXPECT_DOUBLE_EQ(st.max, 8);
    EXPECT_DOUBLE_EQ(st.typical, 5); // s[8 / 2], perftest's median
    EXPECT_DOUBLE_EQ(st.avg, 4.5);
    EXPECT_NEAR(st.stdev, std::sqrt(5.25), 1e-12); // population stdev in floating point
    EXPECT_DOUBLE_EQ(st.p99, 8);                   // nearest rank: ceil(0.99 * 8) = 8
    EXPECT_DOUBLE_EQ(st.p999, 8);
}

TEST(PerfStats, NearestRankPercentile)
{
    std::vector<double> v(1000);
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = (double)(i + 1);
    }
    EXPECT_DOUBLE_EQ(perf_percentile(v.data(), v.size(), 99.0), 990);
    EXPECT_DOUBLE_EQ(perf_percentile(v.data(), v.size(), 99.9), 999);
    EXPECT_DOUBLE_EQ(perf_percentile(v.data(), v.size(), 50.0), 500);
    EXPECT_DOUBLE_EQ(perf_percentile(v.data(), 1, 99.9), 1);
}

TEST(PerfStats, FewSamplesKeepAll)
{
    std::vector<double> s = {2, 1};
    perf_lat_stats_t st;
    perf_lat_stats(s.data(), s.size(), &st);
    EXPECT_EQ(st.samples, 2u);
    EXPECT_DOUBLE_EQ(st.min, 1);
    EXPECT_DOUBLE_EQ(st.max, 2);
}

TEST(PerfStamp, StampsBetweenAnchorsAreInterpolated)
{
    // Synthetic TSC stamps: 2000 ticks for the first 1000 ns (0.5 ns per tick), 400 ticks for
    // the next 1000 ns (2.5 ns per tick); every stamp lands on its exact monotonic time.
    perf_stamp_clock_t clk;
    ASSERT_EQ(perf_stamp_init(&clk, PERF_STAMP_ANCHOR_EVERY), 0); // room for three anchors
    ASSERT_EQ(clk.cap, 3);
    clk.tsc = 1;
    clk.anchor[0] = {0, 1000, 5000};
    clk.anchor[1] = {2, 3000, 6000};
    clk.anchor[2] = {4, 3400, 7000};
    clk.n = 3;
    uint64_t stamp[5] = {1000, 2000, 3000, 3200, 3400};
    EXPECT_EQ(perf_stamp_to_ns(&clk, stamp, 5), 0);
    uint64_t want[5] = {5000, 5500, 6000, 6500, 7000};
    for (int k = 0; k < 5; k++) {
        EXPECT_EQ(stamp[k], want[k]) << k;
    }
    // A stamp below the one before is counted (the caller drops that interval).
    uint64_t back[5] = {1000, 2600, 2400, 3200, 3400};
    EXPECT_EQ(perf_stamp_to_ns(&clk, back, 5), 1);
    EXPECT_EQ(back[1], 5800u);
    EXPECT_EQ(back[2], 4500u); // before its stretch's anchor: extrapolated back from it
    perf_stamp_fini(&clk);
}

TEST(PerfStamp, AnchorsAreTakenOnceInOrder)
{
    perf_stamp_clock_t clk;
    ASSERT_EQ(perf_stamp_init(&clk, 0), 0); // room for two: the first and the last stamp
    clk.tsc = 0;                            // stamps are nanoseconds: an anchor is the stamp itself
    EXPECT_EQ(perf_stamp_anchor(&clk, 0, 100), 100u);
    EXPECT_EQ(perf_stamp_anchor(&clk, 0, 100), 100u); // the same stamp again: not a new anchor
    EXPECT_EQ(perf_stamp_anchor(&clk, 1, 200), 200u);
    EXPECT_EQ(perf_stamp_anchor(&clk, 2, 300), 300u); // beyond the room: not recorded
    EXPECT_EQ(clk.n, 2);
    EXPECT_EQ(clk.anchor[1].index, 1);
    uint64_t stamp[2] = {100, 200};
    EXPECT_EQ(perf_stamp_to_ns(&clk, stamp, 2), 0);
    EXPECT_EQ(stamp[1], 200u); // unchanged
    perf_stamp_fini(&clk);
}

TEST(PerfStamp, RealStampsFollowTheMonotonicClock)
{
    // Stamps 20 ms apart (nanosleep), anchored at 0, 2 and 4, each next to a CLOCK_MONOTONIC
    // read: converted, every interval is the monotonic one (loose bounds: a shared machine may
    // preempt between the two reads).
    perf_stamp_clock_t clk;
    ASSERT_EQ(perf_stamp_init(&clk, PERF_STAMP_ANCHOR_EVERY), 0);
    uint64_t stamp[5], ns[5];
    for (int i = 0; i < 5; i++) {
        if (i > 0) {
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, nullptr);
        }
        stamp[i] = perf_stamp(&clk);
        ns[i] = i % 2 == 0 ? perf_stamp_anchor(&clk, i, stamp[i]) : perf_stamp_monotonic_ns();
    }
    ASSERT_EQ(clk.n, 3);
    EXPECT_EQ(perf_stamp_to_ns(&clk, stamp, 5), 0);
    for (int i = 0; i < 5; i++) {
        EXPECT_NEAR(double(stamp[i]), double(ns[i]), 2e6) << i; // within 2 ms
    }
    EXPECT_EQ(stamp[0], clk.anchor[0].ns); // anchored stamps are their anchors exactly
    EXPECT_EQ(stamp[4], clk.anchor[2].ns);
    for (int i = 1; i < 5; i++) {
        EXPECT_GE(stamp[i] - stamp[i - 1], 19600000u) << i; // 20 ms less 2%
    }
    perf_stamp_fini(&clk);
}

} // namespace
