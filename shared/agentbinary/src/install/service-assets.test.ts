import { mkdir, readFile, stat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPaths, hostPathsUnder } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import {
  defaultServiceOptions,
  readInstalledServiceOptions,
  renderServiceAssets,
  serviceAssetsForHost,
  writeServiceAssets,
  type ServiceAsset,
} from './service-assets.js';
import { thisProductOnly, type ReleaseKinds } from './release-kind.js';

const goldenDir = path.join(import.meta.dirname, '../../../../systemd/golden');
const production = renderServiceAssets(
  hostPaths,
  agentBinaryPathsUnder('/opt/unbounded/agent'),
  'released',
);

describe('service assets', () => {
  it.each(production.map((asset) => [path.basename(asset.path), asset]))(
    'agentbinary#67 %s renders byte-identical to its golden file',
    async (name, asset) => {
      // Regenerate with UPDATE_GOLDEN=1 after an intended change, and review the diff.
      if (process.env.UPDATE_GOLDEN === '1') {
        const { writeFile } = await import('node:fs/promises');
        await writeFile(path.join(goldenDir, `${name}.golden`), asset.content);
      }
      expect(asset.content).toBe(await readFile(path.join(goldenDir, `${name}.golden`), 'utf8'));
    },
  );

  it('agentbinary#5.5 writes dependencies first and the agent unit last', () => {
    expect(production.map((asset) => path.basename(asset.path))).toEqual([
      'aks-flex-node-recovery.sh',
      'aks-flex-node-agent-recovery.service',
      'aks-flex-node-upgrade-guard.service',
      'aks-flex-node-agent.socket',
      'aks-flex-node-agent.service',
    ]);
    expect(production.map((asset) => asset.mode)).toEqual([0o750, 0o644, 0o644, 0o644, 0o644]);
  });

  it('agentbinary#71 the agent unit runs the current link, has OnFailure and the start limits, and restarts after any exit but a requested stop', () => {
    const unit = production.at(-1)?.content ?? '';
    expect(unit).toContain(
      'ExecStart=/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current agent --config /etc/aks-flex-node/config.json',
    );
    expect(unit).toContain('OnFailure=aks-flex-node-agent-recovery.service');
    expect(unit).toMatch(/^StartLimitIntervalSec=300$/m);
    expect(unit).toMatch(/^StartLimitBurst=5$/m);
    expect(unit).toMatch(/^RestartSec=30$/m);
    // A clean exit (SIGHUP from outside systemd) must not leave the agent down: issue 28.
    expect(unit).toMatch(/^Restart=always$/m);
    expect(production.map((asset) => asset.content).join('')).not.toContain('{{');
  });

  it('the upgrade guard hands a failure it cannot get past to the recovery unit, and a last-good that lacks the command (Go: 1, older: 2) is no failure', () => {
    const guard =
      production.find(
        (asset) => path.basename(asset.path) === 'aks-flex-node-upgrade-guard.service',
      )?.content ?? '';
    expect(guard).toContain('OnFailure=aks-flex-node-agent-recovery.service');
    // Starts with every agent start and upgrade: a start limit would fail it, and roll a healthy candidate back.
    expect(guard).toMatch(/^StartLimitIntervalSec=0$/m);
    expect(guard).not.toMatch(/^Restart=/m);
    expect(guard).toMatch(/^SuccessExitStatus=1 2$/m);
    // A "-" prefix would make every failure, a start that never ran included, count as success.
    expect(guard).toMatch(
      /^ExecStart=\/opt\/unbounded\/agent\/lib\/aks-flex-node\/aks-flex-node-last-good guard-agent-upgrade$/m,
    );
  });

  it('agentbinary#75 the rendered script under the host root names no /usr/local path', () => {
    const script = production[0]?.content ?? '';
    expect(script).toContain('/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-last-good');
    expect(script).toContain('/etc/aks-flex-node/agent-upgrade-signal.json');
    expect(script).not.toContain('/usr/local/');
  });

  it('agentbinary#74 the rendered script under the legacy root reads last-good from /usr/local', () => {
    const legacy = renderServiceAssets(hostPaths, agentBinaryPathsUnder('/usr/local'), 'in-use');
    expect(legacy[0]?.content).toContain('/usr/local/lib/aks-flex-node/aks-flex-node-last-good');
    expect(legacy.at(-1)?.content).toContain(
      'ExecStart=/usr/local/lib/aks-flex-node/aks-flex-node-current agent',
    );
  });

  it('issue9 a released legacy root is named by no unit; one in use is writable, optionally', () => {
    const units = (assets: typeof production) =>
      assets.filter((asset) => asset.path.endsWith('.service'));
    // The machines' own usr/local/bin (their copy of the agent) is not the host's legacy root.
    for (const unit of units(production))
      expect(unit.content.replaceAll(/\/var\/lib\/machines\/\S+/g, '')).not.toContain('/usr/local');
    const inUse = renderServiceAssets(
      hostPaths,
      agentBinaryPathsUnder('/opt/unbounded/agent'),
      'in-use',
    );
    for (const unit of units(inUse).filter((asset) => asset.content.includes('ProtectSystem='))) {
      expect(unit.content).toMatch(/^ReadWritePaths=.* -\/usr\/local$/m);
    }
  });

  it.each(['aks-flex-node-upgrade-guard.service', 'aks-flex-node-agent-recovery.service'])(
    "issue21 %s can write each machine's copy of the agent (its directory, optionally) and nothing else of /var/lib/machines",
    (name) => {
      const unit = production.find((asset) => path.basename(asset.path) === name)?.content ?? '';
      const writable = /^ReadWritePaths=(.*)$/m.exec(unit)?.[1]?.split(' ') ?? [];
      expect(writable.filter((entry) => entry.includes('/var/lib/machines'))).toEqual([
        '-/var/lib/machines/kube1/usr/local/bin',
        '-/var/lib/machines/kube2/usr/local/bin',
      ]);
    },
  );

  it("issue21 the agent unit can write the machines' copies: it writes /var/lib/machines, which reset empties", () => {
    const unit = production.at(-1)?.content ?? '';
    expect(/^ReadWritePaths=(.*)$/m.exec(unit)?.[1]?.split(' ')).toContain('-/var/lib/machines');
  });

  describe('Arc (agentbinary#68-70)', () => {
    let tmp: string;
    beforeEach(async () => {
      tmp = await mkdtemp(path.join(os.tmpdir(), 'assets-arc-'));
    });
    afterEach(async () => {
      await rm(tmp, { recursive: true, force: true });
    });
    const agentUnitOf = (assets: ServiceAsset[]) => assets.at(-1)?.content ?? '';

    it('agentbinary#68 a missing unit gives the default options', async () => {
      expect(await readInstalledServiceOptions(hostPathsUnder(tmp))).toEqual(defaultServiceOptions);
    });

    it('agentbinary#69 the default unit gives the default options', async () => {
      const paths = hostPathsUnder(tmp);
      const binaryPaths = agentBinaryPathsUnder(path.join(tmp, 'opt/unbounded/agent'));
      await writeServiceAssets(
        renderServiceAssets(paths, binaryPaths, 'released'),
        createSilentLogger(),
      );
      expect(await readInstalledServiceOptions(paths)).toEqual({ arc: false });
      expect(agentUnitOf(await serviceAssetsForHost(paths, binaryPaths))).not.toContain('himdsd');
    });

    it('agentbinary#70 an Arc unit gives Arc, and every rewrite keeps himdsd.service in After= and Wants=', async () => {
      const paths = hostPathsUnder(tmp);
      const binaryPaths = agentBinaryPathsUnder(path.join(tmp, 'opt/unbounded/agent'));
      // As a Go release wrote it on an Arc host: its golden's dependency lines.
      await mkdir(paths.unitDir, { recursive: true });
      await writeFile(
        path.join(paths.unitDir, 'aks-flex-node-agent.service'),
        '[Unit]\nAfter=network-online.target systemd-udev-settle.service himdsd.service\nWants=network-online.target systemd-udev-settle.service himdsd.service\n',
      );
      expect(await readInstalledServiceOptions(paths)).toEqual({ arc: true });
      // Twice: the first rewrite replaces the Go unit, the second reads back its own.
      for (let rewrite = 0; rewrite < 2; rewrite += 1) {
        await writeServiceAssets(
          await serviceAssetsForHost(paths, binaryPaths),
          createSilentLogger(),
        );
        const unit = await readFile(
          path.join(paths.unitDir, 'aks-flex-node-agent.service'),
          'utf8',
        );
        expect(unit).toMatch(
          /^After=network-online\.target systemd-udev-settle\.service himdsd\.service aks-flex-node-agent\.socket$/m,
        );
        expect(unit).toMatch(
          /^Wants=network-online\.target systemd-udev-settle\.service himdsd\.service$/m,
        );
      }
      expect(await readInstalledServiceOptions(paths)).toEqual({ arc: true });
    });
  });

  describe('writing', () => {
    let tmp: string;
    beforeEach(async () => {
      tmp = await mkdtemp(path.join(os.tmpdir(), 'assets-'));
    });
    afterEach(async () => {
      await rm(tmp, { recursive: true, force: true });
    });

    it('writes each asset with its mode, and a second write changes nothing', async () => {
      const paths = hostPathsUnder(tmp);
      const assets = renderServiceAssets(
        paths,
        agentBinaryPathsUnder(path.join(tmp, 'opt/unbounded/agent')),
        'released',
      );
      expect(await writeServiceAssets(assets, createSilentLogger())).toBe(true);
      for (const asset of assets) {
        expect(await readFile(asset.path, 'utf8')).toBe(asset.content);
        expect((await stat(asset.path)).mode & 0o777).toBe(asset.mode);
      }
      expect(await writeServiceAssets(assets, createSilentLogger())).toBe(false);
    });
  });
});

describe('unit confinement and documentation', () => {
  const repoRoot = path.join(import.meta.dirname, '../../../..');
  const docsUrl = 'https://github.com/Azure/AKSFlexNode/blob/main/';

  it.each(
    production
      .filter((asset) => !asset.path.endsWith('.sh'))
      .map((asset) => [path.basename(asset.path), asset]),
  )(
    'issue12#8 %s: every Documentation= link names a file in this repository',
    async (_name, asset) => {
      const links = /^Documentation=(.*)$/m.exec(asset.content)?.[1]?.split(' ') ?? [];
      expect(links.length).toBeGreaterThan(0);
      for (const link of links) {
        expect(link.startsWith(docsUrl), link).toBe(true);
        await expect(stat(path.join(repoRoot, link.slice(docsUrl.length)))).resolves.toBeDefined();
      }
    },
  );

  it.each(
    production
      .filter((asset) => asset.path.endsWith('.service'))
      .map((asset) => [path.basename(asset.path), asset]),
  )('issue12#8 %s carries the sandboxing the issue lists, sorted', (_name, asset) => {
    for (const directive of [
      'NoNewPrivileges=yes',
      'ProtectHome=read-only',
      'ProtectKernelTunables=yes',
      'ProtectKernelModules=yes',
      'ProtectControlGroups=yes',
      'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
      'RestrictSUIDSGID=yes',
      'LockPersonality=yes',
      'ProtectSystem=strict',
    ]) {
      expect(asset.content).toContain(`\n${directive}\n`);
    }
    const block = asset.content.slice(asset.content.indexOf('LockPersonality='));
    const keys = block
      .split('\n')
      .filter(
        (line) =>
          /^[A-Z]\w+=/.test(line) && !line.startsWith('WantedBy') && !line.startsWith('Also'),
      )
      .map((line) => line.slice(0, line.indexOf('=')));
    expect(keys).toEqual([...keys].sort());
  });
});

describe('issue21#4 another release runs under its own units, never this confinement', () => {
  const layout = agentBinaryPathsUnder('/opt/unbounded/agent');
  const render = (kinds: ReleaseKinds, arc = false) =>
    renderServiceAssets(hostPaths, layout, 'released', { arc }, kinds);
  const named = (assets: ServiceAsset[], name: string) =>
    assets.find((asset) => path.basename(asset.path) === name)?.content ?? '';
  const goGolden = (name: string) =>
    readFile(path.join(goldenDir, 'go-release', `${name}.golden`), 'utf8');
  // The Go goldens name the binary path; the runtime writers name the current link (spec 5.1).
  const asGoldenRenders = (unit: string) =>
    unit.replace(layout.current, '/opt/unbounded/agent/bin/aks-flex-node');

  it.each([false, true])(
    'a Go current (arc %s): the agent unit is the Go release golden, with no confinement, socket or guard',
    async (arc) => {
      const agent = named(
        render({ current: 'other-release', lastGood: 'this-product' }, arc),
        'aks-flex-node-agent.service',
      );
      expect(asGoldenRenders(agent)).toBe(
        await goGolden(arc ? 'aks-flex-node-agent-arc.service' : 'aks-flex-node-agent.service'),
      );
      expect(agent).toContain(`ExecStart=${layout.current} agent`);
    },
  );

  it('a Go last-good: its recovery unit is the Go one (it runs last-good), and the agent unit pulls in no guard', async () => {
    const assets = render({ current: 'this-product', lastGood: 'other-release' });
    expect(named(assets, 'aks-flex-node-agent-recovery.service')).toBe(
      (await goGolden('aks-flex-node-agent-recovery.service')).replace(
        '/usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh',
        layout.recoveryScript,
      ),
    );
    const agent = named(assets, 'aks-flex-node-agent.service');
    expect(agent).not.toContain('aks-flex-node-upgrade-guard.service');
    // Still this product's own, confined agent unit.
    expect(agent).toMatch(/^ProtectSystem=strict$/m);
    expect(agent).toContain('Requires=aks-flex-node-agent.socket');
  });

  it("this product's both links: the units as shipped, the guard pulled in", () => {
    const agent = named(render(thisProductOnly), 'aks-flex-node-agent.service');
    expect(agent).toContain('Wants=aks-flex-node-upgrade-guard.service');
    expect(named(render(thisProductOnly), 'aks-flex-node-agent-recovery.service')).toMatch(
      /^ProtectSystem=strict$/m,
    );
  });

  it("the recovery shim carries the Go agent unit for this host's paths, to write before restarting into a Go last-good", () => {
    const script = named(render(thisProductOnly, true), 'aks-flex-node-recovery.sh');
    const goAgent = named(
      render({ current: 'other-release', lastGood: 'other-release' }, true),
      'aks-flex-node-agent.service',
    );
    expect(script).toContain(`cat <<'UNIT'\n${goAgent}UNIT\n`);
    expect(script).toContain(
      `readonly agent_unit_file=${path.join(hostPaths.unitDir, 'aks-flex-node-agent.service')}`,
    );
    expect(script).not.toContain('@OTHER_RELEASE_AGENT_UNIT@');
  });
});
