import { AgentError, createSilentLogger, isAgentError } from '@aks-flex-node/log';
import type { CommandResult } from '@aks-flex-node/systemd';
import { describe, expect, it } from 'vitest';
import {
  createIpNetworkEffects,
  parseLinks,
  parseNftRules,
  parseNftTables,
  routingTables,
} from './ip-network-effects.js';

// Trimmed from `ip -d -o link show` on iproute2 6.1, with a dummy added by hand.
const links = [
  '1: lo: <LOOPBACK> mtu 65536 qdisc noop state DOWN mode DEFAULT group default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00 promiscuity 0  allmulti 0 minmtu 0 maxmtu 0 addrgenmode eui64 numtxqueues 1',
  '2: vxlan0: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN\\    link/ether 82:b7:17:98:ab:49 brd ff:ff:ff:ff:ff:ff promiscuity 0 \\    vxlan id 5 srcport 0 0 dstport 4789 ttl auto',
  '4: wgpeer@wg51820: <BROADCAST,MULTICAST,M-DOWN> mtu 1500\\    link/ether 8a:11:10:1d:3d:e4 brd ff:ff:ff:ff:ff:ff promiscuity 0 \\    veth addrgenmode eui64',
  '7: localdns: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500\\    link/ether 2a:7e:31:11:0c:95 brd ff:ff:ff:ff:ff:ff promiscuity 0 \\    dummy addrgenmode eui64 numtxqueues 1',
  '',
].join('\n');

/** A runner answering from a table of `file args -> result`; a file named in `missing` is not installed. */
function fakeRunner(answers: Record<string, Partial<CommandResult>>, missing: string[] = []) {
  const calls: string[] = [];
  const run = (file: string, args: readonly string[]) => {
    const line = `${file} ${args.join(' ')}`;
    calls.push(line);
    if (missing.includes(file)) {
      return Promise.reject(
        new AgentError('SYSTEMD_FAILED', `run ${line}: spawn ENOENT`, {
          cause: { code: 'ENOENT' },
        }),
      );
    }
    return Promise.resolve({ exitCode: 0, stdout: '', stderr: '', ...answers[line] });
  };
  return { run, calls };
}

describe('createIpNetworkEffects', () => {
  it('reads each link with its kind; a plain device has none', () => {
    expect(parseLinks(links)).toEqual([
      { name: 'lo', kind: '' },
      { name: 'vxlan0', kind: 'vxlan' },
      { name: 'wgpeer', kind: 'veth' },
      { name: 'localdns', kind: 'dummy' },
    ]);
  });

  it('reads nft tables, the handles of a chain, and the tables policy rules and routes use', () => {
    expect(
      parseNftTables('table ip unbounded_localdns\ntable inet cni_plugins_masquerade\n'),
    ).toEqual([
      { family: 'ip', name: 'unbounded_localdns' },
      { family: 'inet', name: 'cni_plugins_masquerade' },
    ]);
    const chain = [
      'table inet cni_plugins_masquerade {',
      '\tchain masq_checks { # handle 2',
      '\t\tip daddr != 224.0.0.0/4 masquerade comment "net: bridge, id: a" # handle 4',
      '\t}',
      '}',
    ].join('\n');
    expect(parseNftRules(chain)).toEqual([
      { handle: '4', text: 'ip daddr != 224.0.0.0/4 masquerade comment "net: bridge, id: a"' },
    ]);
    expect(
      routingTables(
        '[{"priority":0,"src":"all","table":"255"},{"priority":32765,"src":"all","table":"51820"}]',
        '[{"dst":"10.0.0.0/8","table":"51821"}]',
      ),
    ).toEqual([255, 51820, 51821]);
  });

  it('a host without ip or nft: the listings are undefined, nothing throws', async () => {
    const { run } = fakeRunner({}, ['ip', 'nft']);
    const network = createIpNetworkEffects(createSilentLogger(), run);
    expect(await network.listLinks()).toBeUndefined();
    expect(await network.listNftTables()).toBeUndefined();
    expect(await network.listRoutingTables(4)).toBeUndefined();
  });

  it('a link that will not go is HOST_NETWORK_FAILED with the command; one already gone is fine', async () => {
    const { run, calls } = fakeRunner({
      'ip link delete dev stuck': { exitCode: 2, stderr: 'Operation not permitted' },
      'ip link delete dev gone': { exitCode: 1, stderr: 'Cannot find device "gone"' },
      'ip link show dev gone': { exitCode: 1 },
    });
    const network = createIpNetworkEffects(createSilentLogger(), run);
    await network.deleteLink('gone');
    const error: unknown = await network.deleteLink('stuck').catch((e: unknown) => e);
    expect(isAgentError(error, 'HOST_NETWORK_FAILED')).toBe(true);
    expect(String(error)).toContain('ip link delete dev stuck: Operation not permitted');
    expect(calls).toContain('ip link show dev stuck');
  });

  it('removes every rule of a table, then flushes it; a table that never held routes is fine', async () => {
    let rules = 2;
    const calls: string[] = [];
    const run = (file: string, args: readonly string[]) => {
      const line = `${file} ${args.join(' ')}`;
      calls.push(line);
      if (line === 'ip -4 rule del table 51820')
        return Promise.resolve({ exitCode: rules-- > 0 ? 0 : 2, stdout: '', stderr: '' });
      return Promise.resolve({
        exitCode: 2,
        stdout: '',
        stderr: 'Error: ipv4: FIB table does not exist.',
      });
    };
    await createIpNetworkEffects(createSilentLogger(), run).removeRoutingTable(4, 51820);
    expect(calls).toEqual([
      'ip -4 rule del table 51820',
      'ip -4 rule del table 51820',
      'ip -4 rule del table 51820',
      'ip -4 route flush table 51820',
    ]);
  });
});
