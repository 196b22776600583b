import { describe, expect, it } from 'vitest';
import { legacyHost } from './legacy-host.js';
import { facts, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/daemon-move: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('the daemon moves a legacy host', () => {
  it('pass 1 from /usr/local queues its restart; pass 2 from the copy finishes; the seed goes only then', () => {
    const run = runOnPrivateHost(
      String.raw`${legacyHost}
      # A node an earlier release provisioned: machines, hooks naming its helper under /usr/local.
      real_node /usr/local
      localdns_install
      run_daemon_until_exit_or_gate pass1 /usr/local/lib/aks-flex-node/aks-flex-node-current
      echo "after1_localdns=$(localdns_helper) $("$(localdns_helper)" up)"
      echo "after1_state=$(test -L /opt/unbounded/agent && echo link || echo dir) marker=$(test -e /opt/unbounded/agent/.moving && echo yes || echo no)"
      echo "after1_unit=$(unit_binary)"
      echo "after1_legacy=$(test -e /usr/local/lib/aks-flex-node/aks-flex-node-blue && echo kept || echo gone) seed=$(test -f /usr/local/bin/aks-flex-node && echo kept || echo gone)"
      "$(unit_binary)" version >/dev/null && echo after1_unit_runs=yes
      run_daemon_until_exit_or_gate pass2 "$(unit_binary)"
      "$BINARY" status --json > /tmp/status.json
      echo "status_state=$(jq -r .hostRoot.state /tmp/status.json) move=$(jq -r .startup.move /tmp/status.json)"
      echo "after2_legacy=$(ls /usr/local/lib | tr '\n' ' ')x seed=$(test -e /usr/local/bin/aks-flex-node && echo kept || echo gone)"
      echo "after2_unit=$(unit_binary) record=$(test -e /etc/aks-flex-node/host-root-agents && echo kept || echo gone)"
      # Not even the confinement's write path: it is rendered only while the legacy root is in use.
      # The legacy root as a path of its own (after "=", a space or ReadWritePaths'
      # "-"), not a machine's usr/local/bin under /var/lib/machines.
      grep -HE '(^|[[:space:]=-])/usr/local' /etc/systemd/system/*.service | sed "s/^/mention: /" || true
      echo "units_naming_usr_local=$(cat /etc/systemd/system/*.service | grep -cE '(^|[[:space:]=-])/usr/local')"
      # The machines' hooks follow the helper, and each keeps its copy of the agent.
      echo "after2_hooks=$(grep -ho '^Exec[A-Za-z]*=[^ ]*' /etc/systemd/system/unbounded-agent-regenerate-config@kube1.service /etc/systemd/system/systemd-nspawn@kube2.service.d/override.conf | sort -u | paste -sd' ')"
      echo "after2_copies=$(for m in kube1 kube2; do cmp -s /var/lib/machines/$m/usr/local/bin/aks-flex-node "$BINARY" && echo -n "$m "; done)"
      echo "after2_localdns=$(localdns_helper) $("$(localdns_helper)" up) $(stat -c %a "$(localdns_helper)")"
      "$(unit_binary)" version >/dev/null && echo after2_unit_runs=yes
      # A host an earlier build moved: its LocalDNS unit still names the helper
      # pass 2 removed. The next start points it at the root's copy.
      kill -TERM "$pid"; wait "$pid" || true
      sed -i 's#/opt/unbounded/agent/libexec/#/usr/local/libexec/#' /etc/systemd/system/unbounded-localdns-network.service
      # So do the machines' hooks of a host installed beside them and never moved.
      sed -i 's#/opt/unbounded/agent/bin/#/usr/local/bin/#' /etc/systemd/system/unbounded-agent-regenerate-config@kube1.service /etc/systemd/system/systemd-nspawn@kube2.service.d/override.conf
      run_daemon_until_exit_or_gate repair "$(unit_binary)"
      echo "repaired_localdns=$(localdns_helper) $("$(localdns_helper)" up)"
      echo "repaired_hooks=$(node_hooks)"`,
      180_000,
    );
    expect(run.status, run.stderr).toBe(0);
    const seen = facts(run.stdout);
    expect(seen, run.stdout).toMatchObject({
      pass1_exited: '0',
      after1_state: 'dir marker=yes',
      after1_unit: '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current',
      after1_legacy: 'kept seed=kept',
      after1_unit_runs: 'yes',
      // The Go library's LocalDNS unit follows its helper, or the next boot
      // would run a helper pass 2 removed.
      after1_localdns:
        '/opt/unbounded/agent/libexec/unbounded-localdns-network localdns-network up',
      pass2_gate: 'open',
      status_state: 'installed move=moved',
      after2_legacy: 'x seed=gone',
      after2_unit: '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current record=gone',
      units_naming_usr_local: '0',
      after2_hooks:
        'ExecStart=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle ExecStartPost=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
      after2_copies: 'kube1 kube2 ',
      after2_localdns:
        '/opt/unbounded/agent/libexec/unbounded-localdns-network localdns-network up 700',
      after2_unit_runs: 'yes',
      repair_gate: 'open',
      repaired_localdns:
        '/opt/unbounded/agent/libexec/unbounded-localdns-network localdns-network up',
      repaired_hooks: 'ok',
    });
  });

  it('/opt mounted noexec: the host stays linked with nothing copied, and status names the mount', () => {
    const run = runOnPrivateHost(
      String.raw`${legacyHost}
      mount -o remount,noexec /opt
      set +e; "$BINARY" preflight > /tmp/preflight.out 2>&1; echo "preflight_exit=$?"; set -e
      sed 's/^/preflight: /' /tmp/preflight.out
      run_daemon_until_exit_or_gate start /usr/local/lib/aks-flex-node/aks-flex-node-current
      "$BINARY" status --json > /tmp/status.json
      echo "move=$(jq -r .startup.move /tmp/status.json)"
      echo "reason=$(jq -r .startup.reason /tmp/status.json)"
      echo "root=$(readlink /opt/unbounded/agent) staging=$(test -e /opt/unbounded/agent.staging && echo yes || echo no)"
      echo "opt_files=$(find /opt -mindepth 1 | wc -l)"
      echo "unit=$(unit_binary)"`,
      120_000,
    );
    expect(run.status, run.stderr).toBe(0);
    const seen = facts(run.stdout);
    expect(seen).toMatchObject({
      start_gate: 'open',
      move: 'skipped-noexec',
      root: '/usr/local staging=no',
      // /opt/unbounded and the link: nothing copied.
      opt_files: '2',
      unit: '/usr/local/lib/aks-flex-node/aks-flex-node-current',
    });
    expect(seen.reason).toMatch(/\/opt is mounted noexec/);
    // Linked, the agent installs and runs from /usr/local: preflight passes, and warns that it stays there.
    expect(seen.preflight_exit).toBe('0');
    expect(run.stdout).toMatch(/^preflight: WARNING move-target: \/opt is mounted noexec/m);
  });

  it('preflight fails on a fresh host whose /opt is mounted noexec, naming the mount', () => {
    const run = runOnPrivateHost(String.raw`
      mount -o remount,noexec /opt
      set +e; "$BINARY" preflight; echo "preflight_exit=$?"; set -e`);
    expect(run.status, run.stderr).toBe(0);
    expect(facts(run.stdout)).toMatchObject({ preflight_exit: '1' });
    expect(run.stdout).toMatch(
      /^ERROR install-dir: agent install directory \/opt\/unbounded\/agent\/bin would be on \/opt, which is mounted noexec/m,
    );
  });

  it('preflight fails on a fresh host whose /opt cannot be written, naming the directory', () => {
    const run = runOnPrivateHost(String.raw`
      mount -o remount,ro /opt
      set +e; "$BINARY" preflight; echo "preflight_exit=$?"; set -e
      mount -o remount,rw /opt
      "$BINARY" preflight --json | tail -1 > /tmp/ok.json
      echo "ok=$(jq -r .ok /tmp/ok.json)"`);
    expect(run.status, run.stderr).toBe(0);
    expect(facts(run.stdout)).toMatchObject({ preflight_exit: '1', ok: 'true' });
    expect(run.stdout).toMatch(
      /^ERROR install-dir: agent install directory \/opt\/unbounded\/agent\/bin cannot be created under \/opt/m,
    );
  });
});
