#!/usr/bin/env bash
# Every check and suite, in the order that fails fastest: static checks, unit
# tests, the build, then the suites that run the built executable (private
# mount namespaces, bats, real systemd). Prints a closing tally line.
set -euo pipefail

readonly script_name=test-all
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
cd "$workspace"

passed=0
failed=0
failures=()

step() {
  local name=$1
  shift
  echo "==> $name" >&2
  local started=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "<== $name passed in $((SECONDS - started))s" >&2
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "<== $name FAILED after $((SECONDS - started))s" >&2
  fi
}

main() {
  step format prettier --check .
  step lint eslint --max-warnings 0 .
  step typecheck tsc -p tsconfig.json
  step shellcheck bash scripts/shellcheck.sh
  step unit vitest run --config vitest.config.ts
  step build node scripts/build.mjs
  step namespace vitest run --config vitest.namespace.config.ts
  step scripts bash test/scripts/run.sh
  step e2e vitest run --config vitest.e2e.config.ts
  echo "$script_name: steps ${passed} passed, ${failed} failed${failures[*]:+ (${failures[*]})}" >&2
  echo "${passed} passed, ${failed} failed"
  [[ $failed -eq 0 ]]
}

main "$@"
