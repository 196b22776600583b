import { rm } from 'node:fs/promises';
import { operationSchema, type Operation } from '@aks-flex-node/api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  cniNatChains,
  copyScriptsIn,
  createReleaseDir,
  hostOwnNetwork,
  installProduct,
  realNodeOf,
  packGoNamedArchive,
  productPaths,
  productUnits,
  readRealNodeFacts,
  refuseSharedNetwork,
  resetThroughDaemon,
  runOrThrow,
  runScript,
  startRealNodeMachines,
  waitForStartSequence,
  waitForUnitState,
  withHost,
  writeHostFile,
  type Host,
  type RealNode,
} from './harness/index.js';

// The reset table of spec/daemon.md 8.1, one row per item, on a node laid
// out as the Go releases leave it, under real systemd. Two hosts, one per
// reset path: the daemon's reset (`aks-flex-node reset` while the agent
// runs), and uninstall.sh. Each host is set up once; every row reads the
// facts collected before and after.

type Path = 'reset' | 'uninstall';

interface Outcome {
  node: RealNode;
  before: Record<string, string>;
  after: Record<string, string>;
  /** The second pass, with a bridge named `localdns`: the reset's operation (or uninstall's output), and the facts after. */
  refusal: { left: string[]; output: string; after: Record<string, string> };
}

const outcomes = new Map<Path, Outcome>();

/** Paths of the agent itself, read with the node's facts. */
const agentFacts = String.raw`
  present() { if [ -e "$1" ] || [ -L "$1" ]; then echo yes; else echo no; fi; }
  for u in aks-flex-node-agent.service aks-flex-node-agent.socket aks-flex-node-agent-recovery.service \
    aks-flex-node-upgrade-guard.service aks-flex-node-bootstrap.service; do
    echo "unit.$u=$(present /etc/systemd/system/$u)"
    echo "state.$u=$(systemctl show -p ActiveState --value $u)"
  done
  echo "binary.runs=$(/opt/unbounded/agent/bin/aks-flex-node version >/dev/null 2>&1 && echo yes || echo no)"
  echo "layout=$(present /opt/unbounded/agent/lib/aks-flex-node)"
  echo "recovery=$(present /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-recovery.sh)"
  echo "signal=$(present /etc/aks-flex-node/agent-upgrade-signal.json)"
  echo "digests=$(present /etc/aks-flex-node/host-root-agents)"
  echo "configdir=$(present /etc/aks-flex-node)"
  echo "hostroot=$(present /opt/unbounded/agent)"
`;

async function facts(host: Host): Promise<Record<string, string>> {
  const agent = (await runOrThrow(host, ['/bin/bash', '-c', agentFacts])).stdout;
  const pairs = agent
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line): [string, string] => [
      line.slice(0, line.indexOf('=')),
      line.slice(line.indexOf('=') + 1).trim(),
    ]);
  return { ...(await readRealNodeFacts(host)), ...Object.fromEntries(pairs) };
}

/** A node with the agent running, its machines started and a first-boot unit that ran. */
async function provisionNode(
  host: Host,
): Promise<{ node: RealNode; before: Record<string, string> }> {
  // Laid out at boot, as every e2e host is by default.
  const node = realNodeOf(host);
  await writeHostFile(
    host,
    `/etc/systemd/system/${productUnits.bootstrap}`,
    '[Unit]\nDescription=first boot (e2e)\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n',
  );
  await runOrThrow(host, ['systemctl', 'daemon-reload']);
  await runOrThrow(host, ['systemctl', 'start', productUnits.bootstrap]);
  await installProduct(host);
  await waitForUnitState(host, productUnits.agent, 'active');
  await waitForStartSequence(host);
  await startRealNodeMachines(host);
  return { node, before: await facts(host) };
}

/** The refusal row's set-up: a link named like LocalDNS's that is no dummy. */
async function addForeignLocalDns(host: Host): Promise<void> {
  await refuseSharedNetwork(host, 'adding a link');
  await runOrThrow(host, [
    '/bin/bash',
    '-c',
    'ip link show localdns >/dev/null 2>&1 || ip link add localdns type bridge',
  ]);
}

describeWithProduct(
  'product: reset and uninstall.sh on a real-shaped node, row by row (spec daemon 8.1)',
  () => {
    let releaseDir = '';
    beforeAll(async () => {
      await withHost({ name: 'node-reset' }, async (host) => {
        const { node, before } = await provisionNode(host);
        const operation = await resetThroughDaemon(host);
        expect(operation).toMatchObject({ kind: 'reset', state: 'succeeded' });
        const after = await facts(host);
        // Again, offline now (the daemon has gone), with a bridge named localdns.
        await addForeignLocalDns(host);
        const again = await host.run([productPaths.installedBinary, 'reset', '--json'], {
          timeoutMs: 120_000,
        });
        expect(again.exitCode, `${again.stdout}${again.stderr}`).toBe(0);
        const second: Operation = operationSchema.parse(
          JSON.parse(again.stdout.trim().split('\n').at(-1) ?? ''),
        );
        outcomes.set('reset', {
          node,
          before,
          after,
          refusal: {
            left: second.left ?? [],
            output: second.message ?? '',
            after: await facts(host),
          },
        });
      });
      releaseDir = await createReleaseDir();
      const archive = await packGoNamedArchive(releaseDir);
      await withHost({ name: 'node-uninstall' }, async (host) => {
        const { node, before } = await provisionNode(host);
        await copyScriptsIn(host, archive);
        const uninstall = await runScript(host, 'uninstall.sh', ['--force']);
        expect(uninstall.exitCode, `${uninstall.stdout}${uninstall.stderr}`).toBe(0);
        const after = await facts(host);
        await addForeignLocalDns(host);
        const again = await runScript(host, 'uninstall.sh', ['--force']);
        expect(again.exitCode, `${again.stdout}${again.stderr}`).toBe(0);
        outcomes.set('uninstall', {
          node,
          before,
          after,
          refusal: { left: [], output: `${again.stdout}${again.stderr}`, after: await facts(host) },
        });
      });
    }, 1_200_000);
    afterAll(async () => {
      if (releaseDir !== '') await rm(releaseDir, { recursive: true, force: true });
    });

    const outcome = (path: Path): Outcome => {
      const found = outcomes.get(path);
      if (found === undefined) throw new Error(`the ${path} host did not finish; see beforeAll`);
      return found;
    };
    const paths: Path[] = ['reset', 'uninstall'];
    const units = [
      productUnits.agent,
      productUnits.agentSocket,
      productUnits.recovery,
      productUnits.upgradeGuard,
    ];

    it.each(paths)(
      'daemon#8.1 agent binaries and their blue/green layout: kept by reset, removed by uninstall (%s)',
      (path) => {
        const { before, after } = outcome(path);
        expect([before['binary.runs'], before.layout]).toEqual(['yes', 'yes']);
        const kept = path === 'reset' ? 'yes' : 'no';
        expect([after['binary.runs'], after.layout]).toEqual([kept, kept]);
      },
    );

    it.each(paths)('daemon#8.1 the recovery script is removed (%s)', (path) => {
      const { before, after } = outcome(path);
      expect([before.recovery, after.recovery]).toEqual(['yes', 'no']);
    });

    it.each(paths)(
      'daemon#8.1 the agent, recovery, socket and upgrade-guard units are stopped and removed (%s)',
      (path) => {
        const { before, after } = outcome(path);
        for (const unit of units) {
          expect(before[`unit.${unit}`], unit).toBe('yes');
          expect([after[`unit.${unit}`], after[`state.${unit}`]], unit).toEqual(['no', 'inactive']);
        }
      },
    );

    it.each(paths)('daemon#8.1 the first-boot unit is stopped and removed (%s)', (path) => {
      const { before, after } = outcome(path);
      const unit = productUnits.bootstrap;
      expect([before[`unit.${unit}`], before[`state.${unit}`]]).toEqual(['yes', 'active']);
      expect([after[`unit.${unit}`], after[`state.${unit}`]]).toEqual(['no', 'inactive']);
    });

    it.each(paths)('daemon#8.1 the upgrade signal and the digest record are gone (%s)', (path) => {
      const { after } = outcome(path);
      // No upgrade was pending, so no signal was there to begin with.
      expect([after.signal, after.digests]).toEqual(['no', 'no']);
    });

    it.each(paths)('daemon#8.1 the nspawn lifecycle helper goes under both roots (%s)', (path) => {
      const { before, after } = outcome(path);
      expect(before['helper./opt/unbounded/agent.nspawn']).toBe('yes');
      for (const root of ['/opt/unbounded/agent', '/usr/local']) {
        expect(after[`helper.${root}.nspawn`], root).toBe('no');
      }
    });

    it.each(paths)(
      'daemon#8.1 LocalDNS: its unit stopped and removed, its nft table and helper removed (%s)',
      (path) => {
        const { before, after } = outcome(path);
        expect([
          before['localdns.unit'],
          before['localdns.state'],
          before['localdns.table'],
        ]).toEqual(['yes', 'active', '1']);
        expect(before['helper./opt/unbounded/agent.localdns']).toBe('yes');
        expect([after['localdns.unit'], after['localdns.state'], after['localdns.table']]).toEqual([
          'no',
          'inactive',
          '0',
        ]);
        expect(after['helper./opt/unbounded/agent.localdns']).toBe('no');
      },
    );

    it.for(paths)('daemon#8.1 LocalDNS: its dummy interface is removed (%s)', (path, ctx) => {
      const { node, before, after } = outcome(path);
      if (!node.localDnsDummy) {
        ctx.skip(); // The fixture said so loudly: this kernel has no dummy links (the refusal row still runs).
        return;
      }
      expect([before['localdns.link'], after['localdns.link']]).toEqual(['dummy', '']);
    });

    it.each(paths)(
      'daemon#8.1 a link named localdns that is not a dummy is refused: left, and said so (%s)',
      (path) => {
        const { refusal } = outcome(path);
        expect(refusal.after['localdns.link']).toBe('bridge');
        if (path === 'reset') {
          // Only the refused link: the rootfs has iptables, so no "not installed" either.
          expect(refusal.left).toEqual([
            expect.stringMatching(/^link localdns: it is a bridge link, not the dummy/),
          ]);
        }
        expect(refusal.output).toMatch(/localdns/);
      },
    );

    it.each(paths)(
      'daemon#8.1 machines kube1/kube2: stopped, then enablement, .nspawn, override dir, hook units and rootfs removed (%s)',
      (path) => {
        const { before, after } = outcome(path);
        for (const m of ['kube1', 'kube2']) {
          const keys = ['rootfs', 'nspawn', 'override', 'regenerate', 'enabled'].map(
            (k) => `machine.${m}.${k}`,
          );
          expect(before[`machine.${m}.state`], m).toBe('active');
          expect(
            keys.map((k) => before[k]),
            m,
          ).toEqual(['yes', 'yes', 'yes', 'yes', 'yes']);
          expect(after[`machine.${m}.state`], m).toBe('inactive');
          expect(
            keys.map((k) => after[k]),
            m,
          ).toEqual(['no', 'no', 'no', 'no', 'no']);
        }
      },
    );

    it.each(paths)(
      "daemon#8.1 WireGuard (wg51820-wg51899) and overlay interfaces are removed; the host's own wg12345 stays (%s)",
      (path) => {
        const { node, before, after } = outcome(path);
        const nodeLinks = node.links.map((l) => l.name).filter((n) => n !== 'cni0');
        for (const name of nodeLinks) {
          expect(before.links?.split(' '), name).toContain(name);
          expect(after.links?.split(' '), name).not.toContain(name);
        }
        expect(after.links?.split(' ')).toContain(hostOwnNetwork.link);
      },
    );

    it.each(paths)(
      "daemon#8.1 policy routes of tables 51820-51899 are removed, IPv4 and IPv6; the host's table 100 stays (%s)",
      (path) => {
        const { before, after } = outcome(path);
        expect(before.rules4?.split(' ')).toEqual(
          expect.arrayContaining(['51820', '51821', '100']),
        );
        expect(before.rules6?.split(' ')).toContain('51899');
        expect(before.routes51820).toBe('1');
        expect(after.rules4?.split(' ')).not.toEqual(expect.arrayContaining(['51820']));
        expect(after.rules4?.split(' ')).not.toContain('51821');
        expect(after.rules6?.split(' ')).not.toContain('51899');
        expect(after.rules4?.split(' ')).toContain(String(hostOwnNetwork.table));
        expect(after.routes51820).toBe('0');
      },
    );

    it.each(paths)('daemon#8.1 the WireGuard keys are removed (%s)', (path) => {
      const { before, after } = outcome(path);
      expect(before.keys).toBe('server.priv server.pub');
      expect(after.keys).toBe('');
    });

    it.each(paths)(
      "daemon#8.1 the legacy bridge CNI: cni0 and its nft rule removed, another network's rule kept (%s)",
      (path) => {
        const { before, after } = outcome(path);
        expect(before.links?.split(' ')).toContain('cni0');
        expect(before['cni.rules']).toBe('net: bridge net: other');
        expect(after.links?.split(' ')).not.toContain('cni0');
        expect(after['cni.rules']).toBe('net: other');
      },
    );

    it.each(paths)(
      "daemon#8.1 the legacy bridge CNI's iptables nat chains and their POSTROUTING jumps removed, another network's kept (%s)",
      (path) => {
        const { before, after } = outcome(path);
        const both = [cniNatChains.bridge, cniNatChains.other].sort().join(' ');
        expect([before['cni.natChains'], before['cni.natJumps']]).toEqual([both, both]);
        expect([after['cni.natChains'], after['cni.natJumps']]).toEqual([
          cniNatChains.other,
          cniNatChains.other,
        ]);
      },
    );

    it('daemon#8.1 config: reset keeps /etc/aks-flex-node/config.json byte for byte for the rejoin (docs/usage/operations.md)', () => {
      const { before, after } = outcome('reset');
      expect(before.config).not.toBe('');
      expect(after.config).toBe(before.config);
    });

    it('daemon#8.1 config: uninstall.sh removes /etc/aks-flex-node as the Go reset does', () => {
      expect(outcome('uninstall').after.configdir).toBe('no');
    });

    it.each(paths)('daemon#8.1 the host root: kept by reset, removed by uninstall (%s)', (path) => {
      expect(outcome(path).after.hostroot).toBe(path === 'reset' ? 'yes' : 'no');
    });
  },
);
