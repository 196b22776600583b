#!/usr/bin/env bats
# The host's /opt/unbounded (its mode, its files, a link in it) is left exactly
# as it was by install.sh, bootstrap.sh and uninstall.sh, under a writable and
# a read-only /usr/local (spec scripts 1, "Host root parent"). Each case runs
# on a private host (see test_helper.bash).

bats_require_minimum_version 1.5.0
load test_helper

setup() {
  setup_private_host
  make_fake_bin
  fake_systemctl
  stage_opt_unbounded
  before=$(opt_unbounded_snapshot)
  stub="$BATS_TEST_TMPDIR/aks-flex-node-new"
  write_stub_agent "$stub" "new agent"
  archive=$(make_agent_archive "stub agent")
  echo '{"azure":{"tenantId":"t","arc":{"enabled":true}},"agent":{"logLevel":"info"}}' >"$BATS_TEST_TMPDIR/base.json"
}

teardown() {
  teardown_private_host
}

install_sh() {
  AKS_FLEX_NODE_LOCAL_BINARY=$stub bash "${workspace:?}/scripts/install.sh"
}

bootstrap_sh() {
  AKS_FLEX_NODE_BASE_CONFIG_FILE="$BATS_TEST_TMPDIR/base.json" AKS_FLEX_NODE_AGENT_URL="file://$archive" \
    bash "${workspace:?}/scripts/bootstrap.sh"
}

uninstall_sh() {
  bash "${workspace:?}/scripts/uninstall.sh" --force
}

parent_unchanged() {
  [ "$(stat -c '%a' /opt/unbounded)" = 750 ]
  [ "$(opt_unbounded_snapshot)" = "$before" ]
}

@test "scripts#1 writable /usr/local: install.sh leaves /opt/unbounded as it was" {
  run -0 install_sh
  [ -x /usr/local/bin/aks-flex-node ]
  parent_unchanged
}

@test "scripts#1 writable /usr/local: bootstrap.sh leaves /opt/unbounded as it was" {
  run -0 bootstrap_sh
  [ -x /usr/local/bin/aks-flex-node ]
  parent_unchanged
}

@test "scripts#1 writable /usr/local: uninstall.sh after an install leaves /opt/unbounded as it was" {
  run -0 install_sh
  run -0 uninstall_sh
  [ ! -e /usr/local/bin/aks-flex-node ]
  parent_unchanged
}

@test "scripts#1 read-only /usr/local: install.sh leaves /opt/unbounded as it was" {
  readonly_usr_local
  run -0 install_sh
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
  parent_unchanged
}

@test "scripts#1 read-only /usr/local: bootstrap.sh leaves /opt/unbounded as it was" {
  readonly_usr_local
  run -0 bootstrap_sh
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
  parent_unchanged
}

@test "scripts#1 read-only /usr/local: uninstall.sh after a bootstrap leaves /opt/unbounded as it was" {
  readonly_usr_local
  run -0 bootstrap_sh
  run -0 uninstall_sh
  [ ! -e /opt/unbounded/agent ]
  parent_unchanged
}
