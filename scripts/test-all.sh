#!/usr/bin/env bash
# Every check and suite: the static checks, the unit tests and the build at
# once, then the suites that run the built executable (private mount
# namespaces in one lane, real systemd in another, bats after the first lane
# to end).
# Prints a closing tally line.
set -euo pipefail

readonly script_name=test-all
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
cd "$workspace"

passed=0
failed=0
failures=()
# Test counts across the suites, for the closing tally: steps are not tests.
tests_passed=0
tests_failed=0
tests_skipped=0
checks_failed=0
# The steps before the suites that run the built executable (checks_at_once).
readonly checks=(format lint typecheck shellcheck unit build)
results_dir=$(mktemp -d)
# The background rootfs build (prefetch_e2e_rootfs), when it is still running.
rootfs_pid=
trap '[[ -z "$rootfs_pid" ]] || kill "$rootfs_pid" 2>/dev/null || true; rm -rf "$results_dir"' EXIT

# Runs a vitest config with its JSON report beside the usual output.
vitest_suite() {
  local name=$1 config=$2
  vitest run --config "$config" --reporter=default --reporter=json --outputFile.json="$results_dir/$name.json"
}

# Runs the bats suites, keeping their TAP output for the tally.
bats_suites() {
  bash test/scripts/run.sh | tee "$results_dir/scripts.tap"
}

count_tests() {
  local report
  for report in "$results_dir"/*.json; do
    [[ -e "$report" ]] || continue
    tests_passed=$((tests_passed + $(jq '.numPassedTests' "$report")))
    tests_failed=$((tests_failed + $(jq '.numFailedTests' "$report")))
    tests_skipped=$((tests_skipped + $(jq '.numPendingTests + .numTodoTests' "$report")))
  done
  if [[ -e "$results_dir/scripts.tap" ]]; then
    tests_passed=$((tests_passed + $(grep -c '^ok ' "$results_dir/scripts.tap" || true)))
    tests_failed=$((tests_failed + $(grep -c '^not ok ' "$results_dir/scripts.tap" || true)))
  fi
}

# Names every failed test again at the very end: CI keeps only the tail of a
# long log, and a failure reported half an hour earlier is otherwise out of
# sight. Three lines each, as the tail must say which assertion failed
# without the rest: the error's first line; the line that ends in vitest's
# "expected … to …" (after a multi-line message, which is often a whole
# command's output); and the test file's line that asserted, read from the
# stack.
list_failed_tests() {
  local report header first expected location file line
  for report in "$results_dir"/*.json; do
    [[ -e "$report" ]] || continue
    # Fields joined by the unit separator: a tab is IFS whitespace, and read
    # would merge an empty field into its neighbour.
    while IFS=$'\x1f' read -r header first expected location; do
      echo "$header"
      echo "    ${first}"
      if [[ -n "$expected" && "$expected" != "$first" ]]; then echo "    …${expected}"; fi
      if [[ "$location" =~ ^(.+):([0-9]+)$ ]]; then
        file=${BASH_REMATCH[1]} line=${BASH_REMATCH[2]}
        echo "    at ${file#"$workspace/"}:${line}: $(sed -n "${line}{s/^[[:space:]]*//;p}" "$file" 2>/dev/null | cut -c1-200)"
      fi
    done < <(jq -r --arg suite "$(basename "$report" .json)" --arg root "$workspace/" '
      def clean: gsub("[\n\u001f]"; " ");
      .testResults[] as $file | $file.assertionResults[] | select(.status == "failed")
      | ((.failureMessages[0] // "") | split("\n")) as $lines
      | ([$lines | to_entries[] | select(.value | test("^\\s+at ")) | .key] | first // ($lines | length)) as $firstFrame
      | [
          "FAILED \($suite): \($file.name | ltrimstr($root)) > \(.fullName)",
          ($lines[0] // "" | .[0:300] | clean),
          (if $firstFrame > 0 then $lines[$firstFrame - 1] | .[-200:] | clean else "" end),
          ([$lines[] | select(test("^\\s+at .*\\.test\\.ts:[0-9]+:[0-9]+")) | capture("(?<f>/[^ ():]+\\.test\\.ts):(?<l>[0-9]+)") | "\(.f):\(.l)"] | first // "")
        ] | join("\u001f")
    ' "$report")
  done
  if [[ -e "$results_dir/scripts.tap" ]]; then
    grep '^not ok ' "$results_dir/scripts.tap" | sed 's/^/FAILED scripts: /' || true
  fi
}

# TEST_STEPS=unit,scripts runs only the named steps (for a quick local run); CI runs all.
wanted() {
  [[ -z "${TEST_STEPS:-}" || ",${TEST_STEPS}," == *",$1,"* ]]
}

# Counts a finished step: a check that is not a test suite (format, lint,
# build…) counts as one failure in the tally.
record_step() {
  local name=$1 outcome=$2
  if [[ "$outcome" == passed ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
    case "$name" in unit | namespace | scripts | e2e) ;; *) checks_failed=$((checks_failed + 1)) ;; esac
  fi
}

# Counts the steps that ran beside others (lane_step), from their outcome
# files; a step killed before it wrote one counts as failed.
record_outcomes() { # NAME...
  local name
  for name in "$@"; do
    wanted "$name" || continue
    record_step "$name" "$(cat "$results_dir/$name.outcome" 2>/dev/null || echo failed)"
  done
}

# A step run beside others (checks_at_once, overlapped_suites): its output
# goes to a log of its own, printed whole when the step ends, since two
# steps' lines interleaved would be unreadable; its outcome goes to a file,
# since it runs in a subshell and cannot count in main's variables.
lane_step() {
  local name=$1
  shift
  wanted "$name" || return 0
  echo "==> $name (its output follows when it ends)" >&2
  local started=$SECONDS outcome=failed
  if "$@" >"$results_dir/$name.log" 2>&1; then outcome=passed; fi
  local seconds=$((SECONDS - started))
  # One step's log at a time, even when both lanes end together.
  {
    flock 9
    echo "==> $name output" >&2
    cat "$results_dir/$name.log"
    if [[ "$outcome" == passed ]]; then
      echo "<== $name passed in ${seconds}s" >&2
    else
      echo "<== $name FAILED after ${seconds}s" >&2
    fi
  } 9>"$results_dir/print.lock"
  echo "$outcome" >"$results_dir/$name.outcome"
}

# The suites that run the built executable, in two lanes at once: namespace
# beside e2e, and the short scripts step after whichever of them ends first,
# beside the one still running. A file of either suite keeps about 0.6 of a
# core busy (the rest is stale lockfiles, stability intervals, systemd boots:
# reset-race used 150 CPU-s in its 230 s, reset-mid-move 142 in 228), so two
# files at a time left much of the two cores idle, suite after suite; four
# at a time fill them. Which suite ends first changes from run to run, so the
# scripts step waits for no lane picked in advance. (The scripts step beside
# both lanes from their start saved nothing in a CI run of 2026-12-07, as the
# run is CPU-bound, and in the next its bats walked / while the namespace
# suite removed its private hosts' directories under /tmp.)
overlapped_suites() {
  (lane_step namespace vitest_suite namespace vitest.namespace.config.ts) &
  local lane_one=$!
  (lane_step e2e vitest_suite e2e vitest.e2e.config.ts) &
  local lane_two=$!
  # The first lane to end, however it ends (its outcome is in its file).
  wait -n "$lane_one" "$lane_two" || true
  lane_step scripts bats_suites
  # A lane that died without an outcome (killed) is counted failed.
  # Waiting again for the lane already reaped returns at once.
  wait "$lane_one" || true
  wait "$lane_two" || true
  record_outcomes namespace e2e scripts
}

# The e2e suites boot a Debian root filesystem that a fresh machine must
# build first (debootstrap: 157 s in a CI run, mostly waiting on the
# mirror). The e2e lane's global setup used to build it while the lane's
# workers waited; started here, it builds beside the checks and the unit
# tests instead. The global setup runs the same script, which waits on the
# script's lock and then finds the tree, or builds it and says why this
# build failed. Nothing here waits for it.
prefetch_e2e_rootfs() {
  wanted e2e || return 0
  [[ $EUID -eq 0 ]] || return 0
  # With no check or unit run before the lanes there is nothing to build beside.
  local name before_lanes=
  for name in "${checks[@]}"; do
    if wanted "$name"; then before_lanes=yes; fi
  done
  [[ -n "$before_lanes" ]] || return 0
  echo "==> e2e rootfs: building or reusing it in the background (scripts/e2e-rootfs.sh)" >&2
  bash scripts/e2e-rootfs.sh >/dev/null 2>"$results_dir/rootfs.log" &
  rootfs_pid=$!
}

# Says how the background rootfs build ended, once the suites are done.
report_e2e_rootfs() {
  [[ -n "$rootfs_pid" ]] || return 0
  if wait "$rootfs_pid"; then
    echo "<== e2e rootfs: $(tail -1 "$results_dir/rootfs.log" 2>/dev/null || echo ready)" >&2
  else
    echo "<== e2e rootfs: the background build failed (the e2e global setup tried again); its log:" >&2
    cat "$results_dir/rootfs.log" >&2 || true
  fi
  rootfs_pid=
}

# The checks, the unit tests and the build, all at once: each is one
# process (eslint, tsc, prettier, shellcheck, the build) or, for the unit
# tests, vitest's default of one worker on a 2-core machine (a core less
# than there are; vitest.config.ts now asks for every core), so one after
# another they left a core idle for most of three minutes. None reads what
# another writes: the build writes only dist/, which the checks ignore, and
# no unit test runs dist/.
checks_at_once() {
  local pids=() name
  (lane_step format prettier --check .) &
  pids+=($!)
  (lane_step lint eslint --max-warnings 0 .) &
  pids+=($!)
  (lane_step typecheck tsc -p tsconfig.json) &
  pids+=($!)
  (lane_step shellcheck bash scripts/shellcheck.sh) &
  pids+=($!)
  (lane_step unit vitest_suite unit vitest.config.ts) &
  pids+=($!)
  (lane_step build node scripts/build.mjs) &
  pids+=($!)
  for name in "${pids[@]}"; do wait "$name" || true; done
  record_outcomes "${checks[@]}"
}

main() {
  prefetch_e2e_rootfs
  checks_at_once
  overlapped_suites
  report_e2e_rootfs
  echo "$script_name: steps ${passed} passed, ${failed} failed${failures[*]:+ (${failures[*]})}" >&2
  count_tests
  list_failed_tests >&2
  echo "${tests_passed} passed, $((tests_failed + checks_failed)) failed, ${tests_skipped} skipped"
  [[ $failed -eq 0 ]]
}

main "$@"
