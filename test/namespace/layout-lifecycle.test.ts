import { describe, expect, it } from 'vitest';
import { legacyHost } from './legacy-host.js';
import { binary, facts, namespaceUnavailable, runOnPrivateHost } from './private-host.js';
import { rejoinHelpers } from './rejoin-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/layout-lifecycle: ${unavailable}`);

// install → reset → rejoin → uninstall on the layouts the other suites leave
// without a whole run (docs/reset-test-map.md lists which suite has which):
// each row lays the host out and leaves the daemon running on it (or killed
// in its move), makes /usr/local read-only where the row says, then resets,
// rejoins with install.sh and the agent started again, and uninstalls with
// uninstall.sh. The daemon runs by hand (no systemd); test/e2e runs the same
// under real systemd.

interface Row {
  name: string;
  /** Bash that leaves the host installed and (unless killed) its daemon running as `$pid`. */
  setup: string;
  readOnlyUsrLocal: boolean;
  /** The host root's state the running daemon reports before the reset, where the row is about it. */
  before?: 'linked' | 'installed';
  /** Which root holds the whole agent after the reset. */
  agentIn: 'legacy' | 'host-root';
  rejoinDir: string;
  /**
   * Where the Go release that provisioned the node kept its helpers, which
   * the machines' hooks name: `/usr/local` (an earlier release), or the host
   * root (one that knew it, as on Azure Container Linux, whose /usr/local is
   * read-only).
   */
  nodeRoot: '/usr/local' | '/opt/unbounded/agent';
}

const runDaemon = String.raw`
until_gate() { # binary; follows a move's restart
  local next=$1
  for _ in 1 2 3; do
    run_daemon_until_exit_or_gate s "$next" > /tmp/ended
    case "$(cat /tmp/ended)" in *_gate=open) return 0 ;; esac
    next=$(unit_binary)
  done
  return 1
}`;

const rows: Row[] = [
  {
    name: 'fresh host, /usr/local writable: install.sh puts the binary in /usr/local/bin and the agent moves itself',
    setup: String.raw`rm -f /etc/systemd/system/aks-flex-node-agent.service
      rm -rf /usr/local/lib/aks-flex-node /usr/local/bin/aks-flex-node
      AKS_FLEX_NODE_LOCAL_BINARY="$BINARY" bash "$SCRIPTS/install.sh" > /tmp/install.out 2>&1
      until_gate /usr/local/bin/aks-flex-node`,
    readOnlyUsrLocal: false,
    agentIn: 'host-root',
    rejoinDir: '/opt/unbounded/agent/bin',
    nodeRoot: '/usr/local',
  },
  {
    name: 'fresh host, /usr/local read-only: install.sh installs under the host root',
    setup: String.raw`rm -f /etc/systemd/system/aks-flex-node-agent.service
      rm -rf /usr/local/lib/aks-flex-node /usr/local/bin/aks-flex-node
      mount -o remount,ro /usr/local
      AKS_FLEX_NODE_LOCAL_BINARY="$BINARY" bash "$SCRIPTS/install.sh" > /tmp/install.out 2>&1
      until_gate /opt/unbounded/agent/bin/aks-flex-node`,
    readOnlyUsrLocal: true,
    agentIn: 'host-root',
    rejoinDir: '/opt/unbounded/agent/bin',
    nodeRoot: '/opt/unbounded/agent',
  },
  {
    name: 'linked host (last-good predates the host root), /usr/local writable',
    setup: String.raw`stand_in_last_good
      ln -s /usr/local /opt/unbounded/agent
      until_gate /usr/local/lib/aks-flex-node/aks-flex-node-current
      echo "before_reset_state=$("$BINARY" status --json | jq -r .hostRoot.state)"`,
    readOnlyUsrLocal: false,
    before: 'linked',
    agentIn: 'legacy',
    rejoinDir: '/usr/local/bin',
    nodeRoot: '/usr/local',
  },
  {
    name: 'moved host, /usr/local read-only once the move emptied it',
    setup: String.raw`until_gate /usr/local/lib/aks-flex-node/aks-flex-node-current
      echo "before_reset_state=$("$BINARY" status --json | jq -r .hostRoot.state)"`,
    readOnlyUsrLocal: true,
    before: 'installed',
    agentIn: 'host-root',
    rejoinDir: '/opt/unbounded/agent/bin',
    nodeRoot: '/usr/local',
  },
];

function lifecycle(row: Row) {
  return runOnPrivateHost(
    String.raw`${legacyHost}
    ${rejoinHelpers}
    ${runDaemon}
    stage_parent
    parent_before=$(parent_snapshot)
    # A node as the Go releases left it, its hooks naming the helper where
    # the row's earlier release kept it.
    real_node ${row.nodeRoot}
    ${row.setup}
    # Converged: each machine's copy is the agent current names, and the
    # hooks name the helper under the root the agent runs from.
    echo "node_copies=$(node_copies "$(readlink -f /opt/unbounded/agent)/lib/aks-flex-node/aks-flex-node-current")"
    echo "node_hooks=$(node_hooks "$(readlink -f /opt/unbounded/agent)")"
    ${row.readOnlyUsrLocal ? 'mount -o remount,ro /usr/local 2>/dev/null || true' : ''}
    echo "usr_local=$(touch /usr/local/.probe 2>/dev/null && { rm /usr/local/.probe; echo rw; } || echo ro)"
    # Reset through the running daemon, which records the outcome and stops itself.
    "$BINARY" reset --json > /tmp/reset.json
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    echo "reset_state=$(jq -r .state /tmp/reset.json) kept=$(jq -r .keptBinary /tmp/reset.json)"
    echo "after_reset_left=$(reset_leftovers)"
    echo "after_reset_agent=$(agent_verdict)"
    echo "after_reset_daemons=$(agent_daemons)"
    echo "after_reset_node=$(find /var/lib/machines /etc/systemd/nspawn -mindepth 1 2>/dev/null | wc -l)"
    "$BINARY" reset --json > /tmp/reset2.json
    echo "second_reset=$(jq -c '[.state, (.removed | length)]' /tmp/reset2.json)"
    rejoin_and_uninstall
    [ "$parent_before" = "$(parent_snapshot)" ] && echo parent=kept || echo parent=changed
    echo "parent_mode=$(stat -c %a /opt/unbounded)"`,
    240_000,
  );
}

describe.skipIf(unavailable !== undefined)(
  'install, reset, rejoin and uninstall per layout',
  () => {
    it.each(rows)('scripts#7.2 $name', (row) => {
      const run = lifecycle(row);
      const context = `status ${run.status}\n${run.stdout}\n${run.stderr.slice(-3000)}`;
      expect(run.status, context).toBe(0);
      const seen = facts(run.stdout);
      expect(seen, context).toMatchObject({
        usr_local: row.readOnlyUsrLocal ? 'ro' : 'rw',
        after_reset_left: '',
        after_reset_agent: row.agentIn,
        node_copies: 'kube1:current kube2:current ',
        node_hooks: 'ok',
        after_reset_daemons: '0',
        after_reset_node: '0',
        second_reset: '["succeeded",0]',
        rejoin_dir: row.rejoinDir,
        uninstall_exit: '0',
        after_uninstall_left: '',
        parent: 'kept',
        parent_mode: '750',
      });
      if (row.before !== undefined) expect(seen.before_reset_state, context).toBe(row.before);
      expect(seen.reset_state, context).toMatch(/^succeeded kept=\//);
      expect(seen.rejoin_state, context).toMatch(/^(installed|linked)$/);
    });
  },
);

describe.skipIf(unavailable !== undefined)(
  'reset on a mid-move host whose /usr/local became read-only',
  () => {
    it('daemon#8.4 reset stops at the first legacy file with a hint, and finishes once /usr/local is writable again', () => {
      const run = runOnPrivateHost(
        String.raw`${legacyHost}
      ${rejoinHelpers}
      stage_parent
      parent_before=$(parent_snapshot)
      AKS_FLEX_NODE_FAILPOINT=move/copy-renamed run_daemon_until_exit_or_gate s /usr/local/lib/aks-flex-node/aks-flex-node-current
      mount -o remount,ro /usr/local
      sleep 11 # the killed daemon's lockfile goes stale
      set +e; "$BINARY" reset > /tmp/ro.out 2>&1; echo "ro_exit=$?"; set -e
      echo "ro_error=$(grep '^error:' /tmp/ro.out)"
      echo "ro_hint=$(grep '^hint:' /tmp/ro.out)"
      mount -o remount,rw /usr/local
      "$BINARY" reset --json > /tmp/reset.json
      echo "rw_reset=$(jq -r .state /tmp/reset.json)"
      echo "after_reset_left=$(reset_leftovers)"
      echo "after_reset_agent=$(agent_verdict)"
      rejoin_and_uninstall
      [ "$parent_before" = "$(parent_snapshot)" ] && echo parent=kept || echo parent=changed`,
        240_000,
      );
      const context = `status ${run.status}\n${run.stdout}\n${run.stderr.slice(-3000)}`;
      expect(run.status, context).toBe(0);
      const seen = facts(run.stdout);
      expect(seen, context).toMatchObject({
        ro_exit: '1',
        // The hint names the command as it was invoked ($BINARY here), so it runs as printed.
        ro_hint: `hint: /usr/local/bin is read-only here: remount it read-write (\`mount -o remount,rw /usr/local\`), stop the agent, whose sandbox may keep it read-only (\`systemctl stop aks-flex-node-agent.socket aks-flex-node-agent.service\`), then run \`${binary} reset\` again`,
        rw_reset: 'succeeded',
        after_reset_left: '',
        after_reset_agent: 'legacy',
        uninstall_exit: '0',
        after_uninstall_left: '',
        parent: 'kept',
      });
      expect(seen.ro_error, context).toMatch(/^error: remove \/usr\/local\/bin\/\S+: EROFS/);
    });
  },
);
