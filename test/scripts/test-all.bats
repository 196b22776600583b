#!/usr/bin/env bats
# scripts/test-all.sh runs the namespace suite beside the e2e suite: both at
# once, each one's output whole (never interleaved), and the failures still
# named at the end with the tally. A fake vitest stands in for the suites.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
  make_fake_bin
  events="$BATS_TEST_TMPDIR/events"
  export events
  # Logs when each suite starts and ends, prints two lines a second apart, and
  # writes a JSON report with one test, failed when FAIL_SUITE names the suite.
  # Its error is shaped as vitest's: a message of two lines, the "expected"
  # at the end of the last, then the stack, naming a line of a test file.
  asserting_file="$BATS_TEST_TMPDIR/asserting.test.ts"
  printf '%s\n' "it('fails', () => {" "  expect(seen.fresh_status, context).toBe('0');" "});" >"$asserting_file"
  export asserting_file
  cat >"$FAKE_BIN/vitest" <<'FAKE'
#!/usr/bin/env bash
config=$3
report=${6#--outputFile.json=}
suite=${config#vitest.}
suite=${suite%.config.ts}
echo "start $suite" >>"$events"
echo "first line of $suite"
sleep 1
echo "second line of $suite"
failed=0 status=passed
if [[ "${FAIL_SUITE:-}" == "$suite" ]]; then failed=1 status=failed; fi
jq -n --arg suite "$suite" --arg status "$status" --argjson failed "$failed" --arg root "$PWD/" --arg at "$asserting_file" '{
  numPassedTests: (1 - $failed), numFailedTests: $failed, numPendingTests: 0, numTodoTests: 0,
  testResults: [{name: ($root + "test/" + $suite + "/one.test.ts"),
    assertionResults: [{status: $status, fullName: ("a test of " + $suite), failureMessages: [
      "AssertionError: it broke\nthe command printed this: expected \u00271\u0027 to be \u00270\u0027 // Object.is equality\n    at \($at):2:41\n    at file:///x/node_modules/vitest/run.js:1:1"]}]}]
}' >"$report"
echo "end $suite" >>"$events"
exit "$failed"
FAKE
  chmod +x "$FAKE_BIN/vitest"
}

@test "ci the namespace and e2e suites run at once, each one's output whole, failures named at the end" {
  FAIL_SUITE=e2e TEST_STEPS=namespace,e2e run -1 bash "${workspace:?}/scripts/test-all.sh"
  # Both started before either ended.
  local started
  started=$(head -2 "$events")
  [[ "$started" == *"start namespace"* && "$started" == *"start e2e"* ]]
  local lines
  lines=$(grep -E '^(first|second) line of ' <<<"$output")
  # Each suite's two lines together, though the suites ran at once.
  [[ "$lines" == $'first line of namespace\nsecond line of namespace\nfirst line of e2e\nsecond line of e2e' ||
    "$lines" == $'first line of e2e\nsecond line of e2e\nfirst line of namespace\nsecond line of namespace' ]]
  [[ "$output" == *"<== namespace passed in "* ]]
  [[ "$output" == *"<== e2e FAILED after "* ]]
  # The tally and the failed test come last, after both suites' output.
  local tail
  tail=$(tail -6 <<<"$output")
  [[ "$tail" == *"test-all: steps 1 passed, 1 failed (e2e)"* ]]
  [[ "$tail" == *"FAILED e2e: test/e2e/one.test.ts > a test of e2e"* ]]
  # Which assertion failed, from the tail alone: the error's first line, the
  # expected value after the message, and the asserting line of the test file.
  [[ "$tail" == *"    AssertionError: it broke"* ]]
  [[ "$tail" == *"    …the command printed this: expected '1' to be '0' // Object.is equality"* ]]
  [[ "$tail" == *"    at ${asserting_file}:2: expect(seen.fresh_status, context).toBe('0');"* ]]
  [[ "$(tail -1 <<<"$output")" == "1 passed, 1 failed, 0 skipped" ]]
}

@test "ci the checks, the unit tests and the build run at once, each one's output whole, a failure counted" {
  # One fake for prettier, eslint and tsc: logs its start and end a second
  # apart, prints two lines between, and fails when FAIL_CHECK names it.
  local name
  for name in prettier eslint tsc; do
    cat >"$FAKE_BIN/$name" <<'FAKE'
#!/usr/bin/env bash
name=${0##*/}
echo "start $name" >>"$events"
echo "first line of $name"
sleep 1
echo "second line of $name"
echo "end $name" >>"$events"
[[ "${FAIL_CHECK:-}" != "$name" ]]
FAKE
    chmod +x "$FAKE_BIN/$name"
  done
  # The build is `node scripts/build.mjs`; anything else node is asked goes to the real one.
  local real_node
  real_node=$(command -v node)
  cat >"$FAKE_BIN/node" <<FAKE
#!/usr/bin/env bash
if [[ "\${1:-}" != scripts/build.mjs ]]; then exec "$real_node" "\$@"; fi
echo "start build" >>"\$events"
echo "first line of build"
sleep 1
echo "second line of build"
echo "end build" >>"\$events"
FAKE
  chmod +x "$FAKE_BIN/node"
  FAIL_CHECK=eslint TEST_STEPS=format,lint,typecheck,unit,build run -1 bash "${workspace:?}/scripts/test-all.sh"
  # Every step started before any ended: prettier, eslint, tsc, vitest (the
  # unit config) and the build.
  local started
  started=$(head -5 "$events")
  [[ $(grep -c '^start ' <<<"$started") -eq 5 ]]
  # Each step's lines together, though they ran at once.
  for name in prettier eslint tsc build; do
    grep -A1 -x "first line of $name" <<<"$output" | grep -qx "second line of $name"
  done
  [[ "$output" == *"<== unit passed in "* ]]
  [[ "$output" == *"<== lint FAILED after "* ]]
  [[ "$output" == *"test-all: steps 4 passed, 1 failed (lint)"* ]]
  [[ "$(tail -1 <<<"$output")" == "1 passed, 1 failed, 0 skipped" ]]
}
