// The first-boot unit of scripts/aks-flex-node-bootstrap.bu under real
// systemd, with a probe in place of bootstrap.sh, so each behaviour of the
// unit shows on its own: what reaches the script, the growing retry delay,
// permanent failures, and the condition on the agent unit. The scenarios that
// run the release's bootstrap.sh are in ignition-first-boot.test.ts.
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exitCodes } from '@aks-flex-node/api';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import type { Host } from './harness/index.js';
import {
  waitForJournal,
  runOrThrow,
  waitForUnitState,
  withHost,
  writeIgnitionToDisk,
} from './harness/index.js';
import { quoteEnvValue, readUnitProperties, renderFirstBoot } from './harness/first-boot.js';

const unit = unitNames.bootstrap;
const attempts = '/var/tmp/first-boot-attempts';
const baseConfig = `${JSON.stringify({ azure: { targetCluster: { resourceId: '/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/c' } } })}\n`;

/** A probe in bootstrap.sh's place: records each attempt's time, fails `failures` times with `code`, then succeeds. */
function attemptProbe(failures: number, code: number): string {
  return [
    '#!/usr/bin/env bash',
    'set -euo pipefail',
    `date +%s.%N >>${attempts}`,
    `if (($(wc -l <${attempts}) <= ${String(failures)})); then`,
    `  echo "bootstrap: error: probe attempt fails with ${String(code)}" >&2`,
    `  exit ${String(code)}`,
    'fi',
    '',
  ].join('\n');
}

/** Boots an acl host whose first boot runs the template's unit with this probe and settings. */
async function withProvisionedHost(
  script: string,
  env: string,
  scenario: (host: Host) => Promise<void>,
  extra?: (merged: string) => void,
): Promise<void> {
  const config = await renderFirstBoot({ script, env, baseConfig });
  await withHost(
    {
      variant: 'acl',
      name: 'ign-unit',
      // Ignition provisions this host at its first boot, before the harness
      // could lay a node out; one laid out afterwards would overwrite it.
      node: { empty: 'the first boot provisions the node itself' },
      provision: (merged) => {
        writeIgnitionToDisk(merged, config);
        extra?.(merged);
      },
    },
    scenario,
  );
}

function unitProperties(host: Host, names: readonly string[]): Promise<Map<string, string>> {
  return readUnitProperties(host, unit, names);
}

async function readAttemptTimes(host: Host): Promise<number[]> {
  const result = await host.run(['cat', attempts]);
  return result.stdout.trim().split('\n').filter(Boolean).map(Number);
}

async function isPresent(host: Host, file: string): Promise<boolean> {
  return (await host.run(['test', '-e', file])).exitCode === 0;
}

describe('ignition: the first-boot unit under real systemd', () => {
  it('spec5.4 a value with spaces, quotes, $ and % quoted as the docs say reaches the script unchanged', async () => {
    const probe = `$HOME \${X} %h %% "q" \\ it's`;
    const overrides = JSON.stringify({ aclHarness: { quoting: probe } });
    const script = [
      '#!/usr/bin/env bash',
      'set -euo pipefail',
      'printf %s "$AKS_FLEX_NODE_CONFIG_OVERRIDES" >/var/tmp/probe-overrides',
      'printf %s "$AKS_FLEX_NODE_BASE_CONFIG_FILE" >/var/tmp/probe-base',
      '',
    ].join('\n');
    const env = `AKS_FLEX_NODE_CONFIG_OVERRIDES=${quoteEnvValue(overrides)}\nAKS_FLEX_NODE_AGENT_POOL_NAME=${quoteEnvValue('pool one')}\n`;
    await withProvisionedHost(script, env, async (host) => {
      await waitForUnitState(host, unit, 'active');
      expect((await runOrThrow(host, ['cat', '/var/tmp/probe-overrides'])).stdout).toBe(overrides);
      expect((await runOrThrow(host, ['cat', '/var/tmp/probe-base'])).stdout).toBe(
        hostPaths.firstBootBaseConfig,
      );
      // Success removes the inputs, which can carry a token and a signed URL.
      expect(await isPresent(host, hostPaths.firstBootDir)).toBe(false);
      const props = await unitProperties(host, ['TimeoutStartUSec', 'SubState', 'NRestarts']);
      expect(props.get('TimeoutStartUSec')).toBe('30min');
      expect(props.get('SubState')).toBe('exited');
      expect(props.get('NRestarts')).toBe('0');
      // systemd's own check of the unit as this host's systemd reads it.
      const verify = await host.run(['systemd-analyze', 'verify', `/etc/systemd/system/${unit}`]);
      expect(verify.stdout + verify.stderr).toBe('');
      expect(verify.exitCode).toBe(0);
    });
  });

  it('spec5.3 failed attempts are retried with a delay that grows: 10 s, 20 s, 40 s', async () => {
    await withProvisionedHost(attemptProbe(3, exitCodes.failure.code), '', async (host) => {
      await waitForUnitState(host, unit, 'active', { timeoutMs: 150_000 });
      const times = await readAttemptTimes(host);
      expect(times).toHaveLength(4);
      const gaps = times.slice(1).map((time, i) => time - (times[i] ?? 0));
      process.stderr.write(
        `first-boot retry gaps: ${gaps.map((gap) => `${gap.toFixed(1)} s`).join(', ')}\n`,
      );
      [10, 20, 40].forEach((expected, i) => {
        expect(gaps[i]).toBeGreaterThanOrEqual(expected - 0.5);
        expect(gaps[i]).toBeLessThan(expected + 5);
      });
      expect((await unitProperties(host, ['NRestarts'])).get('NRestarts')).toBe('3');
      expect(await isPresent(host, hostPaths.firstBootDir)).toBe(false);
    });
  });

  // bootstrap.sh's badInput and unsupportedHost (shared/api scriptExitCodes), and the agent's usage.
  it.each([
    ['bad configuration', 65],
    ['an unsupported host', 69],
    ['a config the agent refuses', exitCodes.usage.code],
  ])(
    'spec5.3 a permanent failure (%s, exit %i) stops after one attempt and keeps its inputs',
    async (_, code) => {
      await withProvisionedHost(attemptProbe(100, code), '', async (host) => {
        // failed is systemd's decision not to retry, made when the attempt
        // exited: a retried failure waits out RestartSec in activating
        // (auto-restart) instead, and nothing but a new start leaves failed.
        // So no wait beyond RestartSec is needed to see no retry comes.
        await waitForUnitState(host, unit, 'failed', { timeoutMs: 60_000 });
        const props = await unitProperties(host, [
          'ActiveState',
          'SubState',
          'ExecMainStatus',
          'NRestarts',
          'Result',
        ]);
        expect(props.get('ActiveState')).toBe('failed');
        expect(props.get('SubState')).toBe('failed');
        expect(props.get('ExecMainStatus')).toBe(String(code));
        expect(props.get('Result')).toBe('exit-code');
        expect(props.get('NRestarts')).toBe('0');
        expect(await readAttemptTimes(host)).toHaveLength(1);
        const said = `probe attempt fails with ${String(code)}`;
        expect(await waitForJournal(host, unit, said)).toContain(said);
        expect(await isPresent(host, hostPaths.firstBootScript)).toBe(true);
      });
    },
  );

  it('spec5.3 a host whose agent unit exists skips the unit and runs nothing', async () => {
    const agentUnit = `${hostPaths.unitDir}/${unitNames.agent}`;
    await withProvisionedHost(
      attemptProbe(0, 0),
      '',
      async (host) => {
        const props = await unitProperties(host, [
          'ConditionResult',
          'InvocationID',
          'ActiveState',
        ]);
        expect(props.get('ConditionResult')).toBe('no');
        expect(props.get('InvocationID')).toBe('');
        expect(props.get('ActiveState')).toBe('inactive');
        expect(await isPresent(host, attempts)).toBe(false);
        expect(await isPresent(host, hostPaths.firstBootScript)).toBe(true);
      },
      (merged) => {
        writeFileSync(`${merged}${agentUnit}`, '[Service]\nExecStart=/bin/true\n');
      },
    );
  });
});
