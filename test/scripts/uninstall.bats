#!/usr/bin/env bats
# scripts/uninstall.sh (spec scripts 4, test cases 8.4), run as root on a
# private host (see test_helper.bash) with a fake systemctl and stand-in agent
# binaries that record how they were called. Test names carry the spec case.

bats_require_minimum_version 1.5.0
load test_helper

setup() {
  setup_private_host
  make_fake_bin
  fake_systemctl
  uninstall_sh="${workspace:?}/scripts/uninstall.sh"
}

teardown() {
  teardown_private_host
}

# What the agent's reset leaves under ROOT: bin/aks-flex-node dangling to the
# current link it removed, and the blue binary (spec 8.4 fixture).
reset_layout() { # ROOT
  mkdir -p "$1/bin" "$1/lib/aks-flex-node"
  write_stub_agent "$1/lib/aks-flex-node/aks-flex-node-blue" "kept blue"
  ln -sfn "$1/lib/aks-flex-node/aks-flex-node-current" "$1/bin/aks-flex-node"
}

# Everything a running install has under ROOT: the layout and the helpers.
installed_layout() { # ROOT
  make_managed_layout "$1"
  mkdir -p "$1/libexec"
  write_stub_agent "$1/bin/unbounded-agent-nspawn-lifecycle" helper
  write_stub_agent "$1/libexec/unbounded-localdns-network" helper
  touch "$1/lib/aks-flex-node/aks-flex-node-recovery.sh"
}

install_units() { # UNIT...
  local unit
  mkdir -p /etc/systemd/system
  for unit in "$@"; do
    echo "[Unit]" >"/etc/systemd/system/$unit"
  done
}

run_uninstall() {
  run bash "$uninstall_sh" --force
}

@test "scripts#8.4 uninstall.sh parses, and sourced it assigns the host root and runs nothing" {
  run -0 bash -n "$uninstall_sh"
  reset_layout /opt/unbounded/agent
  run -0 bash -c "source '$uninstall_sh'; echo \"\$HOST_ROOT \$LEGACY_ROOT\""
  [ "$output" = "/opt/unbounded/agent /usr/local" ]
  [ -L /opt/unbounded/agent/bin/aks-flex-node ]
}

@test "scripts#8.4.1 an executable binary under the legacy root is the one found" {
  reset_layout /opt/unbounded/agent
  reset_layout /usr/local
  write_stub_agent /usr/local/lib/aks-flex-node/aks-flex-node-current legacy
  run -0 bash -c "source '$uninstall_sh'; find_install_dir; echo \"\$INSTALL_DIR\""
  [ "$output" = /usr/local/bin ]
  run -0 bash -c "source '$uninstall_sh'; rm /usr/local/lib/aks-flex-node/aks-flex-node-current; find_install_dir; echo \"\$INSTALL_DIR\""
  [ "$output" = /opt/unbounded/agent/bin ]
}

@test "scripts#8.4.2 a host-root install: link, layout and the host root go; /opt/unbounded stays" {
  reset_layout /opt/unbounded/agent
  mkdir -p /opt/unbounded/agent/libexec
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -e /opt/unbounded/agent ] && [ ! -L /opt/unbounded/agent ]
  [ -d /opt/unbounded ]
  [[ "$output" == *"Removed directory: /opt/unbounded/agent"* ]]
}

@test "scripts#8.4.3 the host's files in /opt/unbounded (0750) are kept, with its mode" {
  stage_opt_unbounded
  before=$(opt_unbounded_snapshot)
  reset_layout /opt/unbounded/agent
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -e /opt/unbounded/agent ]
  [ -f /opt/unbounded/artifacts/manifest.json ]
  [ "$(stat -c '%a' /opt/unbounded)" = 750 ]
  [ "$(opt_unbounded_snapshot)" = "$before" ]
}

@test "scripts#8.4.4 an interrupted move: agent.staging and the .moving marker go, then the host root" {
  reset_layout /opt/unbounded/agent
  touch /opt/unbounded/agent/.moving
  mkdir -p /opt/unbounded/agent.staging/bin
  write_stub_agent /opt/unbounded/agent.staging/bin/aks-flex-node staged
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -e /opt/unbounded/agent.staging ] && [ ! -e /opt/unbounded/agent ]
  [ -d /opt/unbounded ]
}

@test "scripts#8.4.5 a legacy install: its link and layout go; a host root holding someone else's file is kept" {
  reset_layout /usr/local
  mkdir -p /opt/unbounded/agent/bin
  echo other >/opt/unbounded/agent/bin/someone-else
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -L /usr/local/bin/aks-flex-node ] && [ ! -e /usr/local/lib/aks-flex-node ]
  [ -d /usr/local/bin ] && [ -d /usr/local/lib ]
  [ "$(cat /opt/unbounded/agent/bin/someone-else)" = other ]
  [[ "$output" == *"Kept /opt/unbounded/agent: it still holds files"* ]]
}

@test "scripts#8.4.6 a migrated host: files removed through the link, the link removed, the parent kept" {
  reset_layout /usr/local
  install -d -m 0755 /opt/unbounded
  ln -s /usr/local /opt/unbounded/agent
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -L /opt/unbounded/agent ] && [ ! -e /opt/unbounded/agent ]
  [ ! -L /usr/local/bin/aks-flex-node ] && [ ! -e /usr/local/lib/aks-flex-node ]
  [ -d /opt/unbounded ] && [ -d /usr/local/bin ]
  [[ "$output" == *"Removed link: /opt/unbounded/agent"* ]]
}

@test "scripts#8.4.7 an operator's link at the host root is kept (and so is one to /usr/local spelled otherwise)" {
  install -d -m 0755 /opt/unbounded /opt/elsewhere
  reset_layout /opt/elsewhere
  echo mine >/opt/elsewhere/operator.conf
  ln -s /opt/elsewhere /opt/unbounded/agent
  run_uninstall
  [ "$status" -eq 0 ]
  [ "$(readlink /opt/unbounded/agent)" = /opt/elsewhere ]
  [ ! -L /opt/elsewhere/bin/aks-flex-node ] && [ ! -e /opt/elsewhere/lib/aks-flex-node ]
  [ "$(cat /opt/elsewhere/operator.conf)" = mine ]
  rm /opt/unbounded/agent
  ln -s /usr/local/ /opt/unbounded/agent
  run_uninstall
  [ "$status" -eq 0 ]
  [ "$(readlink /opt/unbounded/agent)" = /usr/local/ ]
}

@test "scripts#8.4.8 a second run over a clean host succeeds" {
  installed_layout /opt/unbounded/agent
  run_uninstall
  [ "$status" -eq 0 ]
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -e /opt/unbounded/agent ]
}

@test "scripts#8.4.9 no binary: the agent, recovery and first-boot units go; the first-boot unit is disabled --now" {
  install_units aks-flex-node-agent.service aks-flex-node-agent-recovery.service aks-flex-node-bootstrap.service
  run_uninstall
  [ "$status" -eq 0 ]
  for unit in aks-flex-node-agent.service aks-flex-node-agent-recovery.service aks-flex-node-bootstrap.service; do
    [ ! -e "/etc/systemd/system/$unit" ]
  done
  grep -qx 'systemctl disable --now aks-flex-node-bootstrap.service' "$CALLS"
  grep -qx 'systemctl stop aks-flex-node-agent.service' "$CALLS"
  grep -qx 'systemctl daemon-reload' "$CALLS"
  # The first-boot unit is stopped before the agent, as the agent's reset does.
  [ "$(grep -n -m1 bootstrap "$CALLS" | cut -d: -f1)" -lt "$(grep -n -m1 'stop aks-flex-node-agent' "$CALLS" | cut -d: -f1)" ]
}

@test "scripts#8.4.10 no binary and no first-boot unit: nothing run or said about it" {
  install_units aks-flex-node-agent.service aks-flex-node-agent-recovery.service
  run_uninstall
  [ "$status" -eq 0 ]
  [ ! -e /etc/systemd/system/aks-flex-node-agent.service ]
  [ ! -e /etc/systemd/system/aks-flex-node-agent-recovery.service ]
  [[ "$output" != *aks-flex-node-bootstrap* ]]
  run ! grep -q aks-flex-node-bootstrap "$CALLS"
}

@test "issue22#1 the Go releases' upgrade lock is created root's alone (0600)" {
  reset_layout /opt/unbounded/agent
  run_uninstall
  [ "$status" -eq 0 ]
  [ "$(stat -c '%a %U %G' /run/aks-flex-node-agent-upgrade.lock)" = "600 root root" ]
}

@test "scripts#4.2 an installed binary runs reset non-interactively and the script leaves the units to it" {
  installed_layout /opt/unbounded/agent
  install_units aks-flex-node-agent.service
  run env -u TERM bash "$uninstall_sh" --force
  [ "$status" -eq 0 ]
  [ "$(cat "$CALLS")" = "/opt/unbounded/agent/bin/aks-flex-node reset" ]
  [[ "$output" == *"Reset completed"* ]]
  [ -e /etc/systemd/system/aks-flex-node-agent.service ] # the stand-in's reset removes nothing
  [ ! -e /opt/unbounded/agent ]
}

@test "scripts#4.2 upstream #382: a binary that refuses reset, or cannot run at all, falls back to removing the units" {
  installed_layout /usr/local
  install_units aks-flex-node-agent.service aks-flex-node-agent-recovery.service aks-flex-node-agent.socket \
    aks-flex-node-upgrade-guard.service unbounded-localdns-network.service
  STATUS_reset=2 run_uninstall
  [ "$status" -eq 0 ]
  grep -qx '/usr/local/bin/aks-flex-node reset' "$CALLS"
  [[ "$output" == *"Reset failed or is not supported"* ]]
  run -0 find /etc/systemd/system -name 'aks-flex-node*' -o -name 'unbounded-localdns*'
  [ -z "$output" ]
  grep -qx 'systemctl disable --now aks-flex-node-agent.socket' "$CALLS"
  # The socket is stopped before the agent, so no connection starts it again.
  [ "$(grep -n -m1 'agent.socket' "$CALLS" | cut -d: -f1)" -lt "$(grep -n -m1 'stop aks-flex-node-agent.service' "$CALLS" | cut -d: -f1)" ]

  installed_layout /opt/unbounded/agent
  install_units aks-flex-node-agent.service
  mount -o remount,noexec /opt # the binary is there but cannot be executed
  run_uninstall
  [ "$status" -eq 0 ]
  [[ "$output" == *"No AKS Flex Node binary can run here"* ]]
  [ ! -e /etc/systemd/system/aks-flex-node-agent.service ]
  [ ! -e /opt/unbounded/agent ]
}

# A stand-in whose reset is refused as busy (exit 4) the first N times, as the
# agent's is while an activation holds the lock, then succeeds.
busy_reset_agent() { # PATH N
  cat >"$1" <<STUB
#!/usr/bin/env bash
echo "\$0 \$*" >>"$CALLS"
refusals=\$(grep -c ' reset\$' "$CALLS")
if [[ \$refusals -le $2 ]]; then
  echo "error: a reset cannot start now: the host-root move is running and holds the activation lock" >&2
  exit 4
fi
echo "Reset succeeded"
STUB
  chmod 0755 "$1"
}

@test "issue21 daemon#8.4 a reset refused because an activation holds the lock is asked again, not replaced by removing the units" {
  installed_layout /opt/unbounded/agent
  busy_reset_agent /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current 2
  install_units aks-flex-node-agent.service
  run_uninstall
  [ "$status" -eq 0 ]
  [ "$(grep -c 'aks-flex-node reset$' "$CALLS")" -eq 3 ]
  [ "$(grep -c 'An agent activation holds the lock; asking again in 2s' <<<"$output")" -eq 2 ]
  [[ "$output" == *"Reset completed"* ]]
  [[ "$output" != *"removing the units directly"* ]]
  run ! grep -q '^systemctl' "$CALLS"
  [ -e /etc/systemd/system/aks-flex-node-agent.service ] # the stand-in's reset removes nothing
  [ ! -e /opt/unbounded/agent ]
}

@test "issue21 daemon#8.4 still refused after RESET_BUSY_WAIT_SECONDS: 75, and nothing was removed" {
  installed_layout /opt/unbounded/agent
  busy_reset_agent /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current 99
  install_units aks-flex-node-agent.service
  mkdir -p /etc/aks-flex-node /var/lib/aks-flex-node
  echo '{}' >/etc/aks-flex-node/config.json
  RESET_BUSY_WAIT_SECONDS=2 run_uninstall
  [ "$status" -eq 75 ]
  [ "$(grep -c 'aks-flex-node reset$' "$CALLS")" -eq 2 ]
  [[ "$output" == *"still holds the lock after 2s; nothing was removed. Run uninstall.sh again once '/opt/unbounded/agent/bin/aks-flex-node status' shows 'activation: idle'"* ]]
  run ! grep -q '^systemctl' "$CALLS"
  [ -e /etc/systemd/system/aks-flex-node-agent.service ]
  [ -f /etc/aks-flex-node/config.json ] && [ -d /var/lib/aks-flex-node ]
  [ -x /opt/unbounded/agent/bin/aks-flex-node ] && [ -f /opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle ]
}

@test "issue21 a RESET_BUSY_WAIT_SECONDS that is no whole number: 64 before reset runs, nothing removed" {
  installed_layout /opt/unbounded/agent
  busy_reset_agent /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current 99
  install_units aks-flex-node-agent.service
  for bad in 2m -1 ' 5'; do
    RESET_BUSY_WAIT_SECONDS=$bad run_uninstall
    [ "$status" -eq 64 ]
    [[ "$output" == *"RESET_BUSY_WAIT_SECONDS must be a whole number of seconds (0 to 999999), not '$bad'; nothing was removed"* ]]
  done
  [ ! -e "$CALLS" ] || run ! grep -q 'aks-flex-node reset$' "$CALLS"
  [ -e /etc/systemd/system/aks-flex-node-agent.service ]
  [ -x /opt/unbounded/agent/bin/aks-flex-node ]
}

@test "scripts#4.2 both roots are swept: binaries, layouts, helpers; the config, data, log and run directories" {
  installed_layout /opt/unbounded/agent
  installed_layout /usr/local
  mkdir -p /etc/aks-flex-node/first-boot /etc/aks-flex-node/credentials /var/lib/aks-flex-node /var/log/aks-flex-node /run/aks-flex-node
  echo '{}' >/etc/aks-flex-node/config.json
  echo 'sp' >/etc/aks-flex-node/credentials/sp-secret
  run_uninstall
  [ "$status" -eq 0 ]
  for path in /etc/aks-flex-node /var/lib/aks-flex-node /var/log/aks-flex-node /run/aks-flex-node /opt/unbounded/agent \
    /usr/local/bin/aks-flex-node /usr/local/lib/aks-flex-node /usr/local/bin/unbounded-agent-nspawn-lifecycle \
    /usr/local/libexec/unbounded-localdns-network; do
    [ ! -e "$path" ] && [ ! -L "$path" ] || {
      echo "left behind: $path"
      return 1
    }
  done
  [ -d /usr/local/bin ] && [ -d /usr/local/libexec ] && [ -d /opt/unbounded ]
}

@test "scripts#4.1 without --force and without a terminal it stops with 64 and removes nothing" {
  reset_layout /opt/unbounded/agent
  run setsid -w bash "$uninstall_sh" </dev/null
  [ "$status" -eq 64 ]
  [[ "$output" == *"rerun with --force"* ]]
  [ -L /opt/unbounded/agent/bin/aks-flex-node ]
}

@test "scripts#4.1 not run as root: 77, nothing removed" {
  reset_layout /opt/unbounded/agent
  run setpriv --reuid 65534 --regid 65534 --clear-groups bash "$uninstall_sh" --force
  [ "$status" -eq 77 ]
  [[ "$output" == *"This script must be run as root"* ]]
  [ -L /opt/unbounded/agent/bin/aks-flex-node ]
}

@test "scripts#4.2 the Go releases' upgrade lock held: 75, the binaries are kept for a retry" {
  reset_layout /opt/unbounded/agent
  bash -c 'exec 8>>/run/aks-flex-node-agent-upgrade.lock; flock -n 8; touch /run/held; exec sleep 300' &
  track_pid $!
  while [ ! -e /run/held ]; do sleep 0.05; done
  run_uninstall
  [ "$status" -eq 75 ]
  [ -L /opt/unbounded/agent/bin/aks-flex-node ]
}

# A node as the Go agent library leaves it on disk: both machines (root
# filesystem with the agent's copy, .nspawn, hooks, enablement), the hook
# template and the WireGuard keys.
lay_out_node_files() {
  local m
  for m in kube1 kube2; do
    mkdir -p "/var/lib/machines/$m/usr/local/bin" /etc/systemd/nspawn \
      "/etc/systemd/system/systemd-nspawn@$m.service.d" /etc/systemd/system/machines.target.wants
    write_stub_agent "/var/lib/machines/$m/usr/local/bin/aks-flex-node" copy
    printf '[Exec]\nBoot=yes\n' >"/etc/systemd/nspawn/$m.nspawn"
    printf '[Service]\nExecStartPost=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle nspawn-lifecycle post-start %s\n' "$m" \
      >"/etc/systemd/system/systemd-nspawn@$m.service.d/override.conf"
    printf '[Service]\nType=oneshot\n' >"/etc/systemd/system/unbounded-agent-regenerate-config@$m.service"
    ln -sfn /lib/systemd/system/systemd-nspawn@.service "/etc/systemd/system/machines.target.wants/systemd-nspawn@$m.service"
  done
  printf '[Service]\n' >/etc/systemd/system/unbounded-agent-regenerate-config@.service
  install -d -m 0700 /etc/wireguard
  echo key >/etc/wireguard/server.priv
  echo key >/etc/wireguard/server.pub
  echo 'keep me' >/etc/wireguard/operator.conf
}

# A systemctl that records, with each call, whether kube1's rootfs was still there.
fake_systemctl_watching_rootfs() {
  cat >"$FAKE_BIN/systemctl" <<'FAKE'
#!/usr/bin/env bash
state=gone; [[ -d /var/lib/machines/kube1 ]] && state=present
echo "systemctl $* (rootfs $state)" >>"$CALLS"
exit 0
FAKE
  chmod +x "$FAKE_BIN/systemctl"
}

# nft as the node has it: the LocalDNS table and the CNI plugins' chain with
# one rule of the retired bridge network and one of another network.
fake_nft() {
  cat >"$FAKE_BIN/nft" <<'FAKE'
#!/usr/bin/env bash
echo "nft $*" >>"$CALLS"
case "$*" in
  "list tables") printf 'table ip unbounded_localdns\ntable inet cni_plugins_masquerade\ntable inet filter\n' ;;
  "-a list chain inet cni_plugins_masquerade masq_checks")
    printf 'table inet cni_plugins_masquerade {\n\tchain masq_checks { # handle 2\n'
    printf '\t\tip daddr != 224.0.0.0/4 masquerade comment "name: \\"bridge\\" net: bridge, id: a" # handle 4\n'
    printf '\t\tip daddr != 224.0.0.0/4 masquerade comment "net: calico, id: b" # handle 7\n\t}\n}\n' ;;
esac
exit 0
FAKE
  chmod +x "$FAKE_BIN/nft"
}

link_names() { ip -o link show | sed 's/^[0-9]*: \([^:@]*\).*/\1/' | sort | tr '\n' ' '; }

@test "scripts#4.2 daemon#8.1 the node's machines are stopped, then their settings, hooks and root filesystems go; the WireGuard keys too" {
  lay_out_node_files
  fake_systemctl_watching_rootfs
  run_uninstall
  [ "$status" -eq 0 ]
  # Stopped while its root filesystem was still there (the pre-start oneshot first).
  grep -qx "systemctl stop unbounded-agent-regenerate-config@kube1.service systemd-nspawn@kube1.service (rootfs present)" "$CALLS"
  grep -q "systemctl stop unbounded-agent-regenerate-config@kube2.service systemd-nspawn@kube2.service" "$CALLS"
  local m
  for m in kube1 kube2; do
    [ ! -e "/var/lib/machines/$m" ] && [ ! -e "/etc/systemd/nspawn/$m.nspawn" ]
    [ ! -e "/etc/systemd/system/systemd-nspawn@$m.service.d" ]
    [ ! -e "/etc/systemd/system/unbounded-agent-regenerate-config@$m.service" ]
    [ ! -L "/etc/systemd/system/machines.target.wants/systemd-nspawn@$m.service" ]
  done
  [ ! -e /etc/systemd/system/unbounded-agent-regenerate-config@.service ]
  [ ! -e /etc/wireguard/server.priv ] && [ ! -e /etc/wireguard/server.pub ]
  [ -f /etc/wireguard/operator.conf ]
  [[ "$output" == *"Removed: /var/lib/machines/kube1"* ]]
  # A second run finds nothing and succeeds.
  run_uninstall
  [ "$status" -eq 0 ]
  [[ "$output" != *"Removed: /var/lib/machines"* ]]
}

@test "issue21 reset: a machine running outside its unit (kube2, started by hand) is terminated with machinectl before its root filesystem goes" {
  lay_out_node_files
  fake_systemctl_watching_rootfs
  # machined knows kube2 until it is terminated; kube1 only ran under its unit.
  cat >"$FAKE_BIN/machinectl" <<'FAKE'
#!/usr/bin/env bash
state=gone; [[ -d /var/lib/machines/kube2 ]] && state=present
echo "machinectl $* (rootfs $state)" >>"$CALLS"
case "$1" in
  show) [[ "$4" == kube2 && ! -e "$BATS_TEST_TMPDIR/kube2-terminated" ]] ;;
  terminate) touch "$BATS_TEST_TMPDIR/kube2-terminated" ;;
esac
FAKE
  chmod +x "$FAKE_BIN/machinectl"
  run_uninstall
  [ "$status" -eq 0 ]
  run grep '^machinectl terminate' "$CALLS"
  [ "$output" = 'machinectl terminate kube2 (rootfs present)' ]
  [ ! -e /var/lib/machines/kube2 ]
}

@test "scripts#4.2 daemon#8.1 network: WireGuard and overlay links, their policy routes, LocalDNS and bridge CNI go; a localdns that is no dummy and the host's own state stay" {
  fake_nft
  # Stand-ins where this kernel lacks the kind (no wireguard, geneve or ipip
  # here): uninstall.sh removes these by name, whatever their kind.
  local name
  for name in wg51820 wg51899 wg12345 geneve0 ipip0 unbounded0 cbr0 cni0 localdns keepme0; do
    ip link add "$name" type bridge
  done
  ip link add vxlan0 type vxlan id 5 dstport 4789
  ip link set vxlan0 up
  ip -4 rule add table 51820
  ip -4 rule add from 10.1.0.0/16 table 51821
  ip -4 route add 10.8.0.0/16 dev vxlan0 table 51822
  ip -6 rule add table 51899
  ip -4 rule add table 100
  ip -4 route add 10.7.0.0/16 dev vxlan0 table 100
  run_uninstall
  [ "$status" -eq 0 ]
  [ "$(link_names)" = "keepme0 lo localdns wg12345 " ]
  [[ "$output" == *"Left network interface localdns: it is not the dummy LocalDNS creates"* ]]
  [ -z "$(ip -4 rule show table 51820; ip -4 rule show table 51821; ip -6 rule show table 51899)" ]
  [ -z "$(ip -4 route show table 51822 2>/dev/null)" ]
  [ -n "$(ip -4 rule show table 100)" ]
  grep -qx "nft delete table ip unbounded_localdns" "$CALLS"
  grep -qx "nft delete rule inet cni_plugins_masquerade masq_checks handle 4" "$CALLS"
  run ! grep -q "handle 7" "$CALLS"
  run ! grep -q "delete table inet" "$CALLS"
}

@test "issue21 daemon#8.1 the bridge CNI's iptables nat chains and their POSTROUTING jumps go; another network's stay" {
  if ! command -v iptables >/dev/null 2>&1; then
    skip "IPTABLES IS NOT INSTALLED: ./run installs it; the removal of the bridge CNI chains is not shown here"
  fi
  # As the CNI plugins leave them, in this test's own network namespace.
  local bridge=CNI-1f2e3d4c5b6a79880a1b2c3d other=CNI-9a8b7c6d5e4f30211a2b3c4d
  iptables -t nat -N "$bridge"
  iptables -t nat -N "$other"
  iptables -t nat -A "$bridge" -d 10.244.0.0/24 -m comment --comment 'name: "bridge" id: "abc"' -j ACCEPT
  iptables -t nat -A POSTROUTING -s 10.88.0.5/32 -m comment --comment 'name: "podman" id: "x"' -j "$other"
  iptables -t nat -A POSTROUTING -s 10.244.0.5/32 -m comment --comment 'name: "bridge" id: "abc"' -j "$bridge"
  iptables -t nat -A POSTROUTING -s 10.244.0.6/32 -m comment --comment 'name: "bridge" id: "def"' -j "$bridge"
  run_uninstall
  [ "$status" -eq 0 ]
  [[ "$output" == *"Removed bridge CNI iptables chain: nat $bridge"* ]]
  run ! iptables -t nat -n -L "$bridge"
  iptables -t nat -n -L "$other"
  run -0 iptables -t nat -S POSTROUTING
  [[ "$output" == *"-j $other"* ]]
  [[ "$output" != *"$bridge"* ]]
  # A second run finds nothing and says nothing of it.
  run_uninstall
  [ "$status" -eq 0 ]
  [[ "$output" != *"iptables chain"* ]]
}

@test "scripts#4.2 daemon#8.1 a dummy localdns goes (where the kernel has dummy links)" {
  if ! ip link add localdns type dummy 2>/dev/null; then
    skip "THIS KERNEL HAS NO DUMMY LINKS: the removal of a real LocalDNS dummy is not shown here (the refusal of a non-dummy is)"
  fi
  run_uninstall
  [ "$status" -eq 0 ]
  run ! ip link show dev localdns
}

@test "scripts#4.2 without ip or nft: warns, skips the network, removes every file" {
  lay_out_node_files
  # Hidden in this test's mount namespace: a file without execute bits over each.
  touch "$BATS_TEST_TMPDIR/not-installed"
  local tool
  for tool in $(type -a -P ip nft 2>/dev/null | xargs -r realpath | sort -u); do
    host_mount --bind "$BATS_TEST_TMPDIR/not-installed" "$tool"
  done
  run ! ip -V
  run --separate-stderr bash "$uninstall_sh" --force
  [ "$status" -eq 0 ]
  # shellcheck disable=SC2154 # bats sets stderr with --separate-stderr
  [[ "$stderr" == *"nft is not installed"* ]]
  [[ "$stderr" == *"ip is not installed"* ]]
  [ ! -e /var/lib/machines/kube1 ] && [ ! -e /etc/wireguard/server.priv ]
}
