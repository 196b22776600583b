import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activationPlanSchema, activationResultSchema, operationSchema } from '@aks-flex-node/api';
import {
  facts,
  lastJsonLine,
  namespaceUnavailable,
  runOnPrivateHost,
  unmanagedDaemon,
} from './private-host.js';
import { secondBuild } from './second-build.js';

// Direct activation (spec agentbinary §3.6) with the built binary: the plan
// changes nothing, a running daemon takes the candidate over, and with no
// daemon the command activates it itself. That replacing the candidate after
// the command started changes nothing is shown by the snapshot's unit test (#94).
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) {
  console.warn(`SKIPPED test/namespace/direct-activation: ${unavailable}`);
}

/** The second build's directory; its `aks-flex-node` is the candidate. */
let buildDir = '';
beforeAll(() => {
  if (unavailable === undefined) buildDir = secondBuild().dir;
}, 180_000);
afterAll(() => {
  if (buildDir !== '' && process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR === undefined) {
    rmSync(buildDir, { recursive: true, force: true });
  }
});

const slotDir = '/opt/unbounded/agent/lib/aks-flex-node';

const helpers = String.raw`${unmanagedDaemon}
# Every path a direct activation could touch: type, mode, size and link text.
tree() { # a path that does not exist yet is simply not listed
  { find /opt /usr/local /run /var/lib /etc/aks-flex-node /etc/systemd -printf '%p %y %m %s %l\n' 2>/dev/null || true; } | sort
}
report() {
  echo "current=$(readlink -f "$CUR")"
  echo "lastGood=$(readlink -f "$LG")"
  echo "binary=$(readlink -f /opt/unbounded/agent/bin/aks-flex-node)"
  echo "currentVersion=$("$CUR" version --json | jq -r .version)"
  echo "snapshots=$(find /var/lib/aks-flex-node -name 'host-agent-activation-*' | wc -l)"
}
`;

/** The one JSON object a script printed among its `key=value` lines. */
function jsonLine(stdout: string): unknown {
  return JSON.parse(stdout.split('\n').find((line) => line.startsWith('{')) ?? 'null');
}

function run(script: string) {
  const result = runOnPrivateHost(`${helpers}\n${script}`, 150_000, {
    CAND: path.join(buildDir, 'aks-flex-node'),
  });
  return { ...result, context: `status ${result.status}\n${result.stdout}\n${result.stderr}` };
}

describe.skipIf(unavailable !== undefined)('direct activation on a private host', () => {
  it('agentbinary§3.6.1 --preflight on an installed host prints the plan and changes nothing', () => {
    const result = run(String.raw`
      install_agent
      before=$(tree)
      "$BINARY" agent-upgrade --candidate "$CAND" --preflight
      "$BINARY" agent-upgrade --candidate "$CAND" --preflight --json
      [ "$before" = "$(tree)" ] && echo unchanged=yes || { echo unchanged=no; diff <(echo "$before") <(tree) >&2; }`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout).unchanged, result.context).toBe('yes');
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      `Candidate: ${path.join(buildDir, 'aks-flex-node')}`,
      `Active binary: ${slotDir}/aks-flex-node-blue`,
      `Install target: ${slotDir}/aks-flex-node-green`,
    ]);
    expect(lines).toContain('- verify candidate binary');
    expect(lines).toContain(
      `- switch ${slotDir}/aks-flex-node-current to ${slotDir}/aks-flex-node-green`,
    );
    expect(lines).toContain('Preflight: no changes applied');
    const plan = activationPlanSchema.parse(jsonLine(result.stdout));
    expect(plan).toMatchObject({ initializeLayout: false, candidateChanged: true });
    expect(plan.service).toEqual({ installed: false, wasActive: false, updateRequired: false });
  });

  it('agentbinary§3.6.4 --preflight on a host an earlier release installed plans there, without migrating', () => {
    const result = run(String.raw`
      legacy_install
      before=$(tree)
      "$BINARY" agent-upgrade --candidate "$CAND" --preflight --json
      [ "$before" = "$(tree)" ] && echo unchanged=yes || echo unchanged=no
      [ -e /opt/unbounded ] && echo optExists=yes || echo optExists=no`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout), result.context).toMatchObject({
      unchanged: 'yes',
      optExists: 'no',
    });
    const plan = activationPlanSchema.parse(jsonLine(result.stdout));
    expect(plan.activePath).toBe('/usr/local/lib/aks-flex-node/aks-flex-node-blue');
    expect(plan.targetPath).toBe('/usr/local/lib/aks-flex-node/aks-flex-node-green');
  });

  it('agentbinary§3.6 a running daemon takes the candidate over and the command follows it', () => {
    const result = run(String.raw`
      install_agent
      start_daemon
      "$BINARY" agent-upgrade --candidate "$CAND" --json --timeout 90 >/tmp/upgrade.out 2>/tmp/upgrade.err &
      upgrade_pid=$!
      wait_daemon_exit
      start_daemon
      set +e; wait "$upgrade_pid"; echo "exit=$?"; set -e
      stop_daemon
      report
      tail -n 1 /tmp/upgrade.out
      cat /tmp/upgrade.err >&2`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout), result.context).toEqual({
      exit: '0',
      current: `${slotDir}/aks-flex-node-green`,
      lastGood: `${slotDir}/aks-flex-node-blue`,
      binary: `${slotDir}/aks-flex-node-green`,
      currentVersion: '0.2.0-test',
      snapshots: '0',
    });
    const operation = operationSchema.parse(lastJsonLine(result));
    expect(operation).toMatchObject({ state: 'succeeded', toVersion: '0.2.0-test' });
    expect(operation.sourceUrl).toMatch(
      /^file:\/\/\/var\/lib\/aks-flex-node\/host-agent-activation-/,
    );
  });

  it('agentbinary§3.6.2 with no daemon the command activates itself; again, it installs nothing', () => {
    const result = run(String.raw`
      install_agent
      "$BINARY" agent-upgrade --candidate "$CAND" 2>/tmp/first.err
      report
      before=$(tree)
      "$BINARY" agent-upgrade --candidate "$CAND" --json 2>/tmp/second.err
      [ "$before" = "$(tree)" ] && echo unchanged=yes || echo unchanged=no
      set +e; "$BINARY" agent-upgrade --candidate "$CAND" --url "file://$CAND" 2>/dev/null; echo "both=$?"`);
    expect(result.status, result.context).toBe(0);
    expect(result.stdout).toContain(
      `activated host agent daemon: ${slotDir}/aks-flex-node-blue -> ${slotDir}/aks-flex-node-green`,
    );
    expect(facts(result.stdout), result.context).toEqual({
      current: `${slotDir}/aks-flex-node-green`,
      lastGood: `${slotDir}/aks-flex-node-blue`,
      binary: `${slotDir}/aks-flex-node-green`,
      currentVersion: '0.2.0-test',
      snapshots: '0',
      unchanged: 'yes',
      both: '2',
    });
    const second = activationResultSchema.parse(jsonLine(result.stdout));
    expect(second).toMatchObject({ changed: false, current: `${slotDir}/aks-flex-node-green` });
  });

  it('agentbinary§3.6.4 on a host an earlier release installed, the activation migrates first', () => {
    const result = run(String.raw`
      legacy_install
      "$BINARY" agent-upgrade --candidate "$CAND" 2>/tmp/activate.err || { cat /tmp/activate.err >&2; exit 1; }
      echo "root=$(readlink /opt/unbounded/agent)"
      echo "current=$(readlink -f /usr/local/lib/aks-flex-node/aks-flex-node-current)"
      echo "lastGood=$(readlink -f /usr/local/lib/aks-flex-node/aks-flex-node-last-good)"`);
    expect(result.status, result.context).toBe(0);
    expect(facts(result.stdout), result.context).toEqual({
      root: '/usr/local',
      current: '/usr/local/lib/aks-flex-node/aks-flex-node-green',
      lastGood: '/usr/local/lib/aks-flex-node/aks-flex-node-blue',
    });
  });
});
