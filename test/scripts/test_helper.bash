# Shared helpers for the bats suites; loaded with `load test_helper`.
# shellcheck shell=bash

workspace=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export workspace

# A directory on PATH holding fake commands a test writes, first in line.
make_fake_bin() {
  FAKE_BIN="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$FAKE_BIN"
  PATH="$FAKE_BIN:$PATH"
  export FAKE_BIN PATH
}

# Writes an executable fake at $FAKE_BIN/NAME that logs its arguments to
# $BATS_TEST_TMPDIR/calls and exits with the given status.
fake_command() {
  local name=$1 status=${2:-0}
  cat >"$FAKE_BIN/$name" <<FAKE
#!/usr/bin/env bash
echo "$name \$*" >>"$BATS_TEST_TMPDIR/calls"
exit $status
FAKE
  chmod +x "$FAKE_BIN/$name"
}
