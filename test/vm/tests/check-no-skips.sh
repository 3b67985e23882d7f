#!/bin/bash
# test/vm/check_no_skips on JUnit files as ctest --output-junit writes them: a clean report
# passes, a gtest skip and a script's exit 77 each fail it with the test's name and reason, and
# a missing report is an error of its own (2), not a pass.
set -euo pipefail
check=$(dirname "$0")/../check_no_skips
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/clean.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="1" failures="0" disabled="0" skipped="0">
  <testcase name="Msg.PingPong" classname="Msg.PingPong" time="0.1" status="run"><system-out>ok</system-out></testcase>
</testsuite>
XML
cat >"$dir/skips.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="3" failures="0" disabled="0" skipped="2">
  <testcase name="Msg.PingPong" classname="Msg.PingPong" time="0.1" status="run"><system-out>ok</system-out></testcase>
  <testcase name="Window.Reads" classname="Window.Reads" time="0.1" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] Window.Reads
test_rndv_window.cc:40: Skipped
the device has no type 2B memory windows
[  SKIPPED ] Window.Reads (3 ms)</system-out>
  </testcase>
  <testcase name="world_mpirun_ring" classname="world_mpirun_ring" time="0.1" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>SKIP: mpirun not found</system-out>
  </testcase>
</testsuite>
XML
"$check" "$dir/clean.xml"
rc=0
out=$("$check" "$dir/clean.xml" "$dir/skips.xml" 2>&1) || rc=$?
[ "$rc" = 1 ] || { echo "skips: exit $rc, want 1"; exit 1; }
grep -q 'Window.Reads .*the device has no type 2B memory windows' <<<"$out" || { echo "$out"; exit 1; }
grep -q 'world_mpirun_ring .*SKIP: mpirun not found' <<<"$out" || { echo "$out"; exit 1; }
[ "$(grep -c '^SKIPPED in the guest' <<<"$out")" = 2 ] || { echo "$out"; exit 1; }
rc=0
"$check" "$dir/absent.xml" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "missing report: exit $rc, want 2"; exit 1; }
echo "check_no_skips: ok"
