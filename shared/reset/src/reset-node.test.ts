import path from 'node:path';
import {
  legacyBridgeCni,
  localDns,
  nspawnMachineFiles,
  nspawnMachines,
  nspawnUnitNames,
  regenerateConfigTemplate,
  unitNames,
  wireguardKeyFiles,
  type HostPaths,
} from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { machineFileList } from './nspawn-machines.js';
import { resetAgent } from './reset-agent.js';
import {
  exists,
  fakeEffects,
  installAgent,
  installUnitsAndState,
  layOutNodeFiles,
  newHost,
  type FakeNetworkState,
} from './test-fixtures.js';

const log = createSilentLogger();
const bridgeRules = `${legacyBridgeCni.nftTable.family} ${legacyBridgeCni.nftTable.name} ${legacyBridgeCni.nftChain}`;

/** The network a Go-provisioned node has, plus the host's own state that must stay. */
function nodeNetwork(): Partial<FakeNetworkState> {
  return {
    links: [
      { name: 'lo', kind: '' },
      { name: 'eth0', kind: 'veth' },
      { name: localDns.interfaceName, kind: 'dummy' },
      { name: 'wg51820', kind: 'wireguard' },
      { name: 'wg51899', kind: 'wireguard' },
      // Outside unbounded-net's range: an operator's tunnel.
      { name: 'wg12345', kind: 'wireguard' },
      { name: 'geneve0', kind: 'geneve' },
      { name: 'vxlan0', kind: 'vxlan' },
      { name: 'ipip0', kind: 'ipip' },
      { name: 'unbounded0', kind: 'bridge' },
      { name: 'cbr0', kind: 'bridge' },
      { name: legacyBridgeCni.bridge, kind: 'bridge' },
    ],
    nftTables: [localDns.nftTable, legacyBridgeCni.nftTable, { family: 'inet', name: 'filter' }],
    nftRules: {
      [bridgeRules]: [
        {
          handle: '4',
          text: 'ip daddr != 224.0.0.0/4 masquerade comment "name: \\"bridge\\" net: bridge, id: x"',
        },
        { handle: '7', text: 'ip daddr != 224.0.0.0/4 masquerade comment "net: calico, id: y"' },
      ],
    },
    routingTables: { 4: [100, 254, 51820, 51821], 6: [254, 51899] },
    iptablesNat: iptablesNatOfNode,
  };
}

/** The nat table where the bridge network's plugins masqueraded with iptables, beside podman's. */
const iptablesNatOfNode = String.raw`*nat
:PREROUTING ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:CNI-1f2e3d4c5b6a79880a1b2c3d - [0:0]
:CNI-9a8b7c6d5e4f30211a2b3c4d - [0:0]
-A POSTROUTING -s 10.244.0.5/32 -m comment --comment "name: "bridge" id: "abc"" -j CNI-1f2e3d4c5b6a79880a1b2c3d
-A CNI-1f2e3d4c5b6a79880a1b2c3d -d 10.244.0.0/24 -m comment --comment "name: "bridge" id: "abc"" -j ACCEPT
-A POSTROUTING -s 10.88.0.5/32 -m comment --comment "name: "podman" id: "x"" -j CNI-9a8b7c6d5e4f30211a2b3c4d
COMMIT
`;

function machineFiles(paths: HostPaths): string[] {
  return nspawnMachines.flatMap((m) => machineFileList(paths, m));
}

describe('resetAgent on a node as the Go releases leave it', () => {
  it('daemon#8.1-8.2 machines stopped, then their files and rootfs removed, then the network, then the helpers; twice', async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths);
    await layOutNodeFiles(paths);
    const { effects, network, calls, state } = fakeEffects(paths, undefined, nodeNetwork());

    const report = await resetAgent({ paths, effects, network, log });

    const order = calls.map((c) => c.call);
    const at = (call: string) => {
      const i = order.indexOf(call);
      expect(i, call).toBeGreaterThanOrEqual(0);
      return i;
    };
    // Each machine stops (its pre-start oneshot first) after the agent, while its rootfs is there.
    for (const m of nspawnMachines) {
      expect(at(`stop ${nspawnUnitNames.regenerateConfig(m)}`)).toBeLessThan(
        at(`stop ${nspawnUnitNames.machine(m)}`),
      );
      expect(at(`stop ${nspawnUnitNames.machine(m)}`)).toBeGreaterThan(
        at(`stop ${unitNames.agent}`),
      );
      // Then whatever else runs it (started by hand), still before its files go.
      expect(at(`terminate ${m}`)).toBeGreaterThan(at(`stop ${nspawnUnitNames.machine(m)}`));
    }
    expect(
      calls
        .filter((c) => /^(stop systemd-nspawn@|terminate )/.test(c.call))
        .every((c) => c.machinePresent),
    ).toBe(true);
    // The network goes only once the machines are gone, and before systemd reloads.
    const networkCalls = calls.filter((c) => /^(ip|nft|iptables) /.test(c.call));
    expect(networkCalls.every((c) => !c.machinePresent)).toBe(true);
    expect(networkCalls.map((c) => c.call)).toEqual([
      `nft delete table ip ${localDns.nftTable.name}`,
      `ip link delete ${localDns.interfaceName}`,
      'ip link delete wg51820',
      'ip link delete wg51899',
      'ip link delete geneve0',
      'ip link delete vxlan0',
      'ip link delete ipip0',
      'ip link delete unbounded0',
      'ip link delete cbr0',
      `ip link delete ${legacyBridgeCni.bridge}`,
      'ip -4 routing table 51820 removed',
      'ip -4 routing table 51821 removed',
      'ip -6 routing table 51899 removed',
      `nft delete rule ${bridgeRules} handle 4`,
      // The Go reset's iptables side (reset_legacy_cni.go): the bridge network's chain only.
      'iptables nat POSTROUTING chains removed: CNI-1f2e3d4c5b6a79880a1b2c3d',
    ]);
    expect(order.at(-1)).toBe('daemon-reload');

    // Every file of the node is gone; the host's own network state stays.
    for (const file of [
      ...machineFiles(paths),
      path.join(paths.unitDir, regenerateConfigTemplate),
      ...wireguardKeyFiles.map((k) => path.join(paths.wireguardDir, k)),
    ]) {
      expect(await exists(file), file).toBe(false);
    }
    expect(state.links.map((l) => l.name)).toEqual(['lo', 'eth0', 'wg12345']);
    expect(state.nftTables).toEqual([legacyBridgeCni.nftTable, { family: 'inet', name: 'filter' }]);
    expect(state.nftRules[bridgeRules]?.map((r) => r.handle)).toEqual(['7']);
    expect(state.routingTables).toEqual({ 4: [100, 254], 6: [254] });
    expect(state.iptablesNat).toContain('CNI-9a8b7c6d5e4f30211a2b3c4d');
    expect(state.iptablesNat).not.toContain('CNI-1f2e3d4c5b6a79880a1b2c3d');
    expect(report.removed).toEqual(
      expect.arrayContaining([
        'iptables nat chain CNI-1f2e3d4c5b6a79880a1b2c3d',
        nspawnMachineFiles(paths, 'kube1').rootfs,
        'link wg51820',
        'routing table 51899 (IPv6)',
      ]),
    );
    expect(report.left).toEqual([]);
    // The config and the agent binary are what a rejoin uses.
    expect(await exists(paths.configFile)).toBe(true);
    expect(report.keptBinary).toBeDefined();

    calls.length = 0;
    const second = await resetAgent({ paths, effects, network, log });
    expect(second.removed).toEqual([]);
    expect(calls.filter((c) => /^(ip|nft|iptables) |^stop systemd-nspawn/.test(c.call))).toEqual(
      [],
    );
  });

  it.each([
    ['a bridge', 'bridge'],
    ['a plain device', ''],
  ])(
    'daemon#8.1 a link named localdns that is %s is refused: left, reported, and the rest still goes',
    async (_name, kind) => {
      const paths = await newHost();
      await installUnitsAndState(paths);
      const { effects, network, state } = fakeEffects(paths, undefined, {
        links: [
          { name: localDns.interfaceName, kind },
          { name: 'wg51820', kind: 'wireguard' },
        ],
        nftTables: [localDns.nftTable],
      });
      const report = await resetAgent({ paths, effects, network, log });
      expect(state.links).toEqual([{ name: localDns.interfaceName, kind }]);
      expect(state.nftTables).toEqual([]);
      expect(report.left).toEqual([
        expect.stringMatching(/^link localdns: it is .*not the dummy LocalDNS creates/),
      ]);
      expect(report.removed).toContain('link wg51820');
    },
  );

  it('daemon#8.1 a host without nft or ip: warned, reported, and every file still removed', async () => {
    const paths = await newHost();
    await installUnitsAndState(paths);
    await layOutNodeFiles(paths);
    const { effects, network, calls } = fakeEffects(paths, undefined, {
      ...nodeNetwork(),
      missing: ['ip', 'nft'],
    });
    const report = await resetAgent({ paths, effects, network, log });
    expect(calls.filter((c) => /^(ip|nft) /.test(c.call))).toEqual([]);
    expect(report.left).toEqual([
      expect.stringContaining('nft is not installed'),
      expect.stringContaining('ip is not installed'),
    ]);
    for (const file of machineFiles(paths)) expect(await exists(file), file).toBe(false);
    expect(await exists(path.join(paths.unitDir, unitNames.localDnsNetwork))).toBe(false);
  });

  it('daemon#8.2 a failed machine stop removes no machine file and touches no network', async () => {
    const paths = await newHost();
    await layOutNodeFiles(paths);
    const { effects, network, calls } = fakeEffects(
      paths,
      `stop ${nspawnUnitNames.machine('kube1')}`,
      nodeNetwork(),
    );
    await expect(resetAgent({ paths, effects, network, log })).rejects.toThrow(/failed \(fake\)/);
    for (const file of machineFiles(paths)) expect(await exists(file), file).toBe(true);
    expect(calls.filter((c) => /^(ip|nft) /.test(c.call))).toEqual([]);
  });
});
