#!/usr/bin/env bats
# scripts/install.sh (spec scripts 2, test cases 8.2), run as root on a private
# host: /usr/local, /opt and /run are fresh tmpfs mounts, /etc and /var
# overlays (see test_helper.bash). Test names carry the spec case number.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
  setup_private_host
  make_fake_bin
  fake_systemctl
  install_sh="${workspace:?}/scripts/install.sh"
  stub="$BATS_TEST_TMPDIR/aks-flex-node-new"
  write_stub_agent "$stub" "new agent"
}

teardown() {
  teardown_private_host
}

# Runs the whole script installing the stub, as an operator would.
run_install() { # [args...]
  AKS_FLEX_NODE_LOCAL_BINARY=$stub run bash "$install_sh" "$@"
}

# Runs shell code with install.sh's functions defined (sourcing runs no main).
run_sourced() { # CODE
  run bash -c "source '$install_sh'; $1"
}

no_staging_files() {
  # What find found is its stdout; its stderr may name directories another
  # suite removed while the walk ran (its private hosts under /tmp), which
  # are not staging files.
  run --separate-stderr find / -xdev -name '.aks-flex-node.*' -print -quit
  [ -z "$output" ]
  run find /usr/local /opt -name '.aks-flex-node.*'
  [ -z "$output" ]
}

@test "scripts#8.1 install.sh parses, and assigns the host root, legacy root and lock" {
  run -0 bash -n "$install_sh"
  run_sourced "echo \"\$HOST_ROOT \$LEGACY_ROOT \$UPGRADE_LOCK\""
  [ "$output" = "/opt/unbounded/agent /usr/local /run/aks-flex-node-agent-upgrade.lock" ]
}

@test "scripts#8.2.1 an unprivileged user piping the script to bash reaches main and is refused with 77" {
  run -77 bash -c "setpriv --reuid 65534 --regid 65534 --clear-groups bash <'$install_sh'"
  [[ "$output" == *"This script must be run as root"* ]]
  [ ! -e /usr/local/bin ]
}

@test "scripts#8.2.2 sourcing defines HOST_ROOT and runs nothing" {
  run_sourced "echo \"root=\$HOST_ROOT\""
  [ "$output" = "root=/opt/unbounded/agent" ]
  [ ! -e /usr/local/bin ]
}

@test "scripts#8.2.3 a missing install directory is created 0755 root:root and the binary is executable" {
  run_sourced 'umask 077; INSTALL_DIR=/opt/unbounded/agent/bin; MANAGED_BINARY_DIR=/opt/unbounded/agent/lib/aks-flex-node; install_binary '"$stub"
  [ "$status" -eq 0 ]
  [ "$(stat -c '%F %a %U %G' /opt/unbounded/agent/bin)" = "directory 755 root root" ]
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
  [ "$(stat -c '%a' /opt/unbounded/agent/bin/aks-flex-node)" = 755 ]
}

@test "scripts#8.2.4 an existing install directory keeps its mode 0711" {
  install -d -m 0711 /usr/local/bin
  run_install
  [ "$status" -eq 0 ]
  [ "$(stat -c '%a' /usr/local/bin)" = 711 ]
  [ -x /usr/local/bin/aks-flex-node ]
}

@test "scripts#8.2.5 the binary of a running process is replaced; it keeps running and new runs get the new file" {
  install -d -m 0755 /usr/local/bin
  cp /usr/bin/sleep /usr/local/bin/aks-flex-node
  /usr/local/bin/aks-flex-node 300 &
  pid=$!
  track_pid "$pid"
  cp /usr/bin/printf "$stub"
  run_install
  [ "$status" -eq 0 ]
  kill -0 "$pid"
  run -0 /usr/local/bin/aks-flex-node 'replaced'
  [ "$output" = replaced ]
  no_staging_files
}

@test "scripts#8.2.6 the managed link is refused while the agent unit exists; link and layout unchanged" {
  make_managed_layout /usr/local
  touch /etc/systemd/system/aks-flex-node-agent.service
  run_install
  [ "$status" -eq 78 ]
  [[ "$output" == *"Refusing to replace the managed symbolic link at /usr/local/bin/aks-flex-node"* ]]
  [[ "$output" == *"aks-flex-node reset"* ]]
  [ "$(readlink /usr/local/bin/aks-flex-node)" = /usr/local/lib/aks-flex-node/aks-flex-node-current ]
  [ "$(readlink -e /usr/local/bin/aks-flex-node)" = /usr/local/lib/aks-flex-node/aks-flex-node-blue ]
  run -0 /usr/local/bin/aks-flex-node version
  [ "$output" = "managed blue" ]
  no_staging_files
}

@test "scripts#8.2.6 the managed link is refused while the agent service is active, even with no unit file" {
  make_managed_layout /usr/local
  AGENT_ACTIVE=1 AKS_FLEX_NODE_LOCAL_BINARY=$stub run bash "$install_sh"
  [ "$status" -eq 78 ]
  grep -qx 'systemctl is-active --quiet aks-flex-node-agent.service' "$CALLS"
  [ -L /usr/local/bin/aks-flex-node ]
}

@test "scripts#8.2.7 after reset (no unit) the retained layout under /usr/local is found again and replaced" {
  make_managed_layout /usr/local
  run_install
  [ "$status" -eq 0 ]
  [[ "$output" == *"layout retained after reset"* ]]
  [ ! -L /usr/local/bin/aks-flex-node ]
  [ -f /usr/local/bin/aks-flex-node ] && [ -x /usr/local/bin/aks-flex-node ]
  [ ! -e /usr/local/lib/aks-flex-node ]
  run -0 /usr/local/bin/aks-flex-node version
  [ "$output" = "new agent" ]
}

@test "scripts#8.2.7 after reset the retained layout under the host root is found again there, /usr/local writable" {
  make_managed_layout /opt/unbounded/agent
  run_install
  [ "$status" -eq 0 ]
  [[ "$output" == *"layout retained after reset"* ]]
  [ -f /opt/unbounded/agent/bin/aks-flex-node ] && [ ! -L /opt/unbounded/agent/bin/aks-flex-node ]
  [ ! -e /opt/unbounded/agent/lib/aks-flex-node ]
  [ ! -e /usr/local/bin/aks-flex-node ]
}

@test "scripts#8.2.8 an unexpected link is refused without telling root to run it; the link is unchanged" {
  install -d -m 0755 /usr/local/bin
  write_stub_agent "$BATS_TEST_TMPDIR/someone-else" "someone else"
  ln -s "$BATS_TEST_TMPDIR/someone-else" /usr/local/bin/aks-flex-node
  run_install
  [ "$status" -eq 78 ]
  [[ "$output" == *"Refusing to replace the unexpected symbolic link at /usr/local/bin/aks-flex-node."* ]]
  [[ "$output" == *"do not execute"* ]]
  [[ "$output" != *"aks-flex-node reset"* ]]
  [ "$(readlink /usr/local/bin/aks-flex-node)" = "$BATS_TEST_TMPDIR/someone-else" ]
  [ ! -e "$CALLS" ]
}

@test "scripts#8.2.9 a directory at the binary's path fails and receives nothing" {
  install -d -m 0755 /usr/local/bin/aks-flex-node
  run_install
  [ "$status" -eq 1 ]
  [[ "$output" == *"Failed to install binary to /usr/local/bin/aks-flex-node"* ]]
  [ -z "$(ls -A /usr/local/bin/aks-flex-node)" ]
  no_staging_files
}

@test "scripts#8.2.10 a missing source fails to stage; the previous binary still works and nothing is left" {
  install -d -m 0755 /usr/local/bin
  write_stub_agent /usr/local/bin/aks-flex-node "previous agent"
  run_sourced 'resolve_install_dir; install_binary /nonexistent/aks-flex-node'
  [ "$status" -eq 1 ]
  [[ "$output" == *"Failed to stage binary in /usr/local/bin"* ]]
  run -0 /usr/local/bin/aks-flex-node version
  [ "$output" = "previous agent" ]
  no_staging_files
  AKS_FLEX_NODE_LOCAL_BINARY=/nonexistent/aks-flex-node run bash "$install_sh"
  [ "$status" -eq 65 ]
}

@test "scripts#8.2.11 the Go releases' upgrade lock held elsewhere fails the install with 75 and changes nothing" {
  bash -c 'exec 8>>/run/aks-flex-node-agent-upgrade.lock; flock -n 8; touch /run/held; exec sleep 300' &
  track_pid $!
  while [ ! -e /run/held ]; do sleep 0.05; done
  run_install
  [ "$status" -eq 75 ]
  [[ "$output" == *"Agent binary activation is in progress; retry the installation"* ]]
  [ ! -e /usr/local/bin/aks-flex-node ]
  no_staging_files
}

@test "issue22#1 the Go releases' upgrade lock is left root's alone (0600), also when it was 0644 and another user's" {
  install -m 0644 -o nobody -g nogroup /dev/null /run/aks-flex-node-agent-upgrade.lock
  run_install
  [ "$status" -eq 0 ]
  [ "$(stat -c '%a %U %G' /run/aks-flex-node-agent-upgrade.lock)" = "600 root root" ]
}

@test "scripts#8.2.12 a fresh host installs under /usr/local; bin is created and no probe is left" {
  run_sourced "resolve_install_dir; echo \"\$INSTALL_DIR \$MANAGED_BINARY_DIR\""
  [ "$output" = "/usr/local/bin /usr/local/lib/aks-flex-node" ]
  [ "$(stat -c '%a %U' /usr/local/bin)" = "755 root" ]
  [ -z "$(ls -A /usr/local/bin)" ]
  [ ! -e /opt/unbounded ]
}

@test "scripts#8.2.13 /opt/unbounded with staged artifacts but no host root is no installation: /usr/local" {
  stage_opt_unbounded
  run_sourced "resolve_install_dir; echo \"\$INSTALL_DIR\""
  [ "$output" = /usr/local/bin ]
}

@test "scripts#8.2.14 a real host root wins, whatever /usr/local allows" {
  install -d -m 0755 /opt/unbounded/agent
  run_sourced "resolve_install_dir; echo \"\$INSTALL_DIR \$MANAGED_BINARY_DIR\""
  [ "$output" = "/opt/unbounded/agent/bin /opt/unbounded/agent/lib/aks-flex-node" ]
  run_install
  [ "$status" -eq 0 ]
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
  [ ! -e /usr/local/bin/aks-flex-node ]
}

@test "scripts#8.2.15 a host root linked to /usr/local (linked legacy host) installs under /usr/local" {
  install -d -m 0755 /opt/unbounded
  ln -s /usr/local /opt/unbounded/agent
  run_sourced "resolve_install_dir; echo \"\$INSTALL_DIR\""
  [ "$output" = /usr/local/bin ]
}

@test "scripts#8.2.16 read-only /usr/local and no /opt/unbounded: host root, each directory created 0755" {
  readonly_usr_local
  run_sourced "resolve_install_dir; echo \"\$INSTALL_DIR\""
  [ "$output" = /opt/unbounded/agent/bin ]
  [ ! -e /opt/unbounded ]
  (umask 077 && AKS_FLEX_NODE_LOCAL_BINARY=$stub bash "$install_sh" >/dev/null)
  [ "$(stat -c '%a' /opt/unbounded /opt/unbounded/agent /opt/unbounded/agent/bin)" = "$(printf '755\n755\n755')" ]
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
}

@test "scripts#8.2.17 read-only /usr/local with the host's /opt/unbounded 0750: host root, parent untouched" {
  readonly_usr_local
  stage_opt_unbounded
  before=$(opt_unbounded_snapshot)
  run_install
  [ "$status" -eq 0 ]
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
  [ "$(stat -c '%a' /opt/unbounded)" = 750 ]
  [ -f /opt/unbounded/artifacts/manifest.json ]
  [ "$(opt_unbounded_snapshot)" = "$before" ]
}

@test "scripts#2.3 an operator's link at the host root (upstream #381) is installed through and kept" {
  install -d -m 0755 /opt/unbounded /opt/elsewhere/agent
  ln -s /opt/elsewhere/agent /opt/unbounded/agent
  run_install
  [ "$status" -eq 0 ]
  [ -x /opt/elsewhere/agent/bin/aks-flex-node ]
  [ "$(readlink /opt/unbounded/agent)" = /opt/elsewhere/agent ]
  [ ! -e /usr/local/bin/aks-flex-node ]
}

@test "scripts#2.1 --install-dir naming the chosen directory is accepted with a deprecation warning" {
  run_install --install-dir /usr/local/bin/
  [ "$status" -eq 0 ]
  [[ "$output" == *"--install-dir is deprecated; the installer chooses the install directory"* ]]
  [ -x /usr/local/bin/aks-flex-node ]
}

@test "scripts#2.1 --install-dir or AKS_FLEX_NODE_INSTALL_DIR naming another directory is ignored with a warning" {
  run_install --install-dir /opt/custom/bin
  [ "$status" -eq 0 ]
  [[ "$output" == *"--install-dir /opt/custom/bin is deprecated and ignored: this host keeps the agent in /usr/local/bin"* ]]
  [ -x /usr/local/bin/aks-flex-node ]
  [ ! -e /opt/custom ]
  rm /usr/local/bin/aks-flex-node
  AKS_FLEX_NODE_INSTALL_DIR=/opt/custom/bin AKS_FLEX_NODE_LOCAL_BINARY=$stub run bash "$install_sh"
  [ "$status" -eq 0 ]
  [[ "$output" == *"is deprecated and ignored"* ]]
  [ ! -e /opt/custom ]
}

@test "scripts#2.2 a release archive by URL is installed; the custom URL is never printed and the binary never run" {
  archive=$(make_agent_archive "downloaded agent")
  AKS_FLEX_NODE_VERSION=v0.0.0-test AKS_FLEX_NODE_DOWNLOAD_URL="file://$archive" run bash "$install_sh"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Using custom AKS Flex Node download URL"* ]]
  [[ "$output" != *"$archive"* ]]
  [ ! -e "$CALLS" ]
  run -0 /usr/local/bin/aks-flex-node version
  [ "$output" = "downloaded agent" ]
  [ "$(stat -c '%a' /etc/aks-flex-node /var/lib/aks-flex-node /var/log/aks-flex-node)" = "$(printf '755\n755\n755')" ]
}

@test "scripts#2.2 a download that fails exits 75 (retry); an archive without the Go-named member exits 65" {
  AKS_FLEX_NODE_VERSION=v1 AKS_FLEX_NODE_DOWNLOAD_URL="file://$BATS_TEST_TMPDIR/missing.tar.gz" run bash "$install_sh"
  [ "$status" -eq 75 ]
  tar -czf "$BATS_TEST_TMPDIR/wrong.tar.gz" -C "$BATS_TEST_TMPDIR" aks-flex-node-new
  AKS_FLEX_NODE_VERSION=v1 AKS_FLEX_NODE_DOWNLOAD_URL="file://$BATS_TEST_TMPDIR/wrong.tar.gz" run bash "$install_sh"
  [ "$status" -eq 65 ]
  [[ "$output" == *"Binary not found in archive"* ]]
  [ ! -e /usr/local/bin/aks-flex-node ]
}

@test "scripts#2.1 an unknown argument is refused with 64 before anything is installed" {
  run_install --prefix /opt
  [ "$status" -eq 64 ]
  [ ! -e /usr/local/bin ]
}

@test "issue24#4 a custom URL without a version installs offline: the GitHub API is not asked" {
  archive=$(make_agent_archive "downloaded agent")
  # This namespace has no network: asking api.github.com failed with 75.
  run env -u AKS_FLEX_NODE_VERSION AKS_FLEX_NODE_DOWNLOAD_URL="file://$archive" bash "$install_sh"
  [ "$status" -eq 0 ]
  [[ "$output" != *"api.github.com"* ]]
  run -0 /usr/local/bin/aks-flex-node version
  [ "$output" = "downloaded agent" ]
}

@test "issue24#4 --sha256 or AKS_FLEX_NODE_SHA256: a match installs, a mismatch exits 65 with expected and got, a malformed value 64" {
  archive=$(make_agent_archive "downloaded agent")
  digest=$(sha256sum "$archive")
  digest=${digest%% *}
  wrong=$(printf '0%.0s' {1..64})
  AKS_FLEX_NODE_DOWNLOAD_URL="file://$archive" AKS_FLEX_NODE_SHA256=$wrong run bash "$install_sh"
  [ "$status" -eq 65 ]
  [[ "$output" == *"expected $wrong, got $digest"* ]]
  [ ! -e /usr/local/bin/aks-flex-node ]
  AKS_FLEX_NODE_DOWNLOAD_URL="file://$archive" run bash "$install_sh" --sha256 nothex
  [ "$status" -eq 64 ]
  [ ! -e /usr/local/bin/aks-flex-node ]
  AKS_FLEX_NODE_DOWNLOAD_URL="file://$archive" run bash "$install_sh" --sha256 "${digest^^}"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Archive SHA-256 verified: $digest"* ]]
  run -0 /usr/local/bin/aks-flex-node version
}

@test "issue24#4 a failed download names the tool's reason and the URL without its query" {
  AKS_FLEX_NODE_DOWNLOAD_URL="file://$BATS_TEST_TMPDIR/missing.tar.gz?sig=SECRET" run bash "$install_sh"
  [ "$status" -eq 75 ]
  [[ "$output" == *"from file://$BATS_TEST_TMPDIR/missing.tar.gz: curl: ("* ]]
  [[ "$output" != *"SECRET"* ]]
}

@test "issue24#4 the next steps name commands that still run once the agent started from the host root" {
  run_install
  [ "$status" -eq 0 ]
  [[ "$output" == *"/usr/local/bin/aks-flex-node start --config /etc/aks-flex-node/config.json"* ]]
  [[ "$output" == *"Check it:                 /opt/unbounded/agent/bin/aks-flex-node status"* ]]
  [[ "$output" != *"/usr/local/bin/aks-flex-node status"* ]]
}

@test "issue24#4 redact_url drops credentials, query and fragment" {
  run_sourced 'redact_url "https://user:pw@example.com/a/b.tar.gz?sv=1&sig=x#f"; redact_url "file:///tmp/a.tar.gz"'
  [ "$output" = "$(printf 'https://example.com/a/b.tar.gz\nfile:///tmp/a.tar.gz')" ]
}
