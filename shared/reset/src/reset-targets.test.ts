import { hostPathsUnder } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { resetTargets } from './reset-targets.js';

const helpers = (targets: string[]) => targets.filter((t) => /\/(bin|libexec|lib)\//.test(t));

describe('resetTargets', () => {
  it('daemon#54 distinct roots: the helpers and recovery script under the host root, then under the legacy root', () => {
    const paths = hostPathsUnder('/');
    expect(helpers(resetTargets(paths))).toEqual([
      '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-recovery.sh',
      '/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
      '/opt/unbounded/agent/libexec/unbounded-localdns-network',
      '/usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh',
      '/usr/local/bin/unbounded-agent-nspawn-lifecycle',
      '/usr/local/libexec/unbounded-localdns-network',
    ]);
  });

  it('daemon#55 one root (a test layout whose roots coincide): each helper once', () => {
    const paths = { ...hostPathsUnder('/'), root: '/usr/local' };
    expect(helpers(resetTargets(paths))).toEqual([
      '/usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh',
      '/usr/local/bin/unbounded-agent-nspawn-lifecycle',
      '/usr/local/libexec/unbounded-localdns-network',
    ]);
  });

  it('daemon#8.1 the units, the signal and the digest record, never a binary or the config', () => {
    const targets = resetTargets(hostPathsUnder('/'));
    expect(targets).toEqual(
      expect.arrayContaining([
        '/etc/systemd/system/aks-flex-node-agent.service',
        '/etc/systemd/system/aks-flex-node-agent.socket',
        '/etc/systemd/system/aks-flex-node-agent-recovery.service',
        '/etc/systemd/system/aks-flex-node-upgrade-guard.service',
        '/etc/systemd/system/unbounded-localdns-network.service',
        '/etc/aks-flex-node/agent-upgrade-signal.json',
        '/etc/aks-flex-node/host-root-agents',
      ]),
    );
    expect(
      targets.filter((t) => t.endsWith('/aks-flex-node') || t.includes('config.json')),
    ).toEqual([]);
  });
});
