#!/bin/bash
# test/vm/guest-gtest on a unit test binary (no guest: label unit): a filter that selects tests
# passes with their report written, a filter that selects nothing fails, and in the guest's mode
# (IBMSG_VM=1) a googletest skip fails through check_no_skips with the skip's message.
# Usage: guest-gtest.sh GTEST_BINARY
set -uo pipefail
bin=${1:?usage: guest-gtest.sh GTEST_BINARY}
run=$(dirname "$0")/../guest-gtest
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}
first=$("$bin" --gtest_list_tests | awk '/^[^ ].*\.$/ { sub(/\.$/, ""); print; exit }')
[ -n "$first" ] || fail "$bin lists no test"

IBMSG_VM=0 "$run" "$dir/a" "$first.*" "$bin" >"$dir/out" 2>&1 || fail "a selecting filter: $(cat "$dir/out")"
n=$(grep -c '<testcase ' "$dir/a/$(basename "$bin").xml")
want=$("$bin" --gtest_list_tests --gtest_filter="$first.*" | grep -c '^  ')
[ "$n" = "$want" ] || fail "the report holds $n tests, the filter selects $want"

if IBMSG_VM=0 "$run" "$dir/b" "NoSuchSuite.*" "$bin" >"$dir/out" 2>&1; then
    fail "a filter that selects nothing passed"
fi
grep -q "ran no test of 'NoSuchSuite" "$dir/out" || fail "no reason given: $(cat "$dir/out")"

# A skip, as googletest reports it, read by the guest's check.
cat >"$dir/skip.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" disabled="0" errors="0" name="AllTests">
  <testsuite name="Window" tests="1" failures="0" disabled="0" skipped="1" errors="0">
    <testcase name="Reads" status="run" result="skipped" time="0." classname="Window">
      <skipped message="test_rndv_window.cc:40&#x0A;the device has no type 2B memory windows"><![CDATA[test_rndv_window.cc:40
the device has no type 2B memory windows]]></skipped>
    </testcase>
  </testsuite>
</testsuites>
XML
if "$(dirname "$0")/../check_no_skips" "$dir/skip.xml" >"$dir/out" 2>&1; then
    fail "a googletest skip passed check_no_skips"
fi
grep -q "SKIPPED in the guest: Reads .*the device has no type 2B memory windows" "$dir/out" ||
    fail "the skip's reason was not printed: $(cat "$dir/out")"
echo "PASS"
