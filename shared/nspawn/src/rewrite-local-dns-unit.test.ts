import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { createLogger, createSilentLogger } from '@aks-flex-node/log';
import { rewriteLocalDnsUnit } from './rewrite-local-dns-unit.js';

const log = createSilentLogger();

/**
 * A LocalDNS network unit shaped as the Go agent library leaves it on a host
 * installed under `/usr/local`: a oneshot that sets the machines' DNS
 * network up and down through the helper, ordered before the machines.
 */
function goLocalDnsUnit(helper: string): string {
  return [
    '[Unit]',
    'Description=Unbounded LocalDNS network for the nspawn machines',
    'After=network-online.target',
    'Before=systemd-nspawn@kube1.service systemd-nspawn@kube2.service',
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `ExecStart=${helper} up --interface localdns --listen 169.254.10.10`,
    `ExecStop="${helper}" down`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

describe('rewriteLocalDnsUnit: the LocalDNS unit follows the helper the move relocates', () => {
  let tmp: string;
  let paths: HostPaths;
  let unit: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'localdns-unit-'));
    paths = hostPathsUnder(tmp);
    unit = path.join(paths.unitDir, 'unbounded-localdns-network.service');
    await mkdir(paths.unitDir, { recursive: true });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('daemon#5.2.4 points a unit naming /usr/local at the host root, keeping every other byte and the mode', async () => {
    const legacyHelper = path.join(paths.legacy, 'libexec/unbounded-localdns-network');
    await writeFile(unit, goLocalDnsUnit(legacyHelper));
    await chmod(unit, 0o640);
    const result = await rewriteLocalDnsUnit(paths.root, paths, log);
    const rootHelper = path.join(paths.root, 'libexec/unbounded-localdns-network');
    expect(result).toEqual({ unit, helper: rootHelper, changed: true, foreign: [] });
    expect(await readFile(unit, 'utf8')).toBe(goLocalDnsUnit(rootHelper));
    expect((await stat(unit)).mode & 0o777).toBe(0o640);
    // Idempotent: the move runs it on both passes.
    expect((await rewriteLocalDnsUnit(paths.root, paths, log))?.changed).toBe(false);
  });

  it('an undo points it back at the legacy root', async () => {
    await writeFile(
      unit,
      goLocalDnsUnit(path.join(paths.root, 'libexec/unbounded-localdns-network')),
    );
    const result = await rewriteLocalDnsUnit(paths.legacy, paths, log);
    expect(result?.changed).toBe(true);
    expect(await readFile(unit, 'utf8')).toBe(
      goLocalDnsUnit(path.join(paths.legacy, 'libexec/unbounded-localdns-network')),
    );
  });

  it('a unit naming the resolved legacy root (/usr/local a link to /var/usrlocal) is rewritten too', async () => {
    const real = path.join(tmp, 'var/usrlocal');
    await mkdir(real, { recursive: true });
    await mkdir(path.dirname(paths.legacy), { recursive: true });
    await symlink(real, paths.legacy);
    await writeFile(unit, goLocalDnsUnit(path.join(real, 'libexec/unbounded-localdns-network')));
    await rewriteLocalDnsUnit(paths.root, paths, log);
    expect(await readFile(unit, 'utf8')).toBe(
      goLocalDnsUnit(path.join(paths.root, 'libexec/unbounded-localdns-network')),
    );
  });

  it('keeps helper paths under any other prefix, and says so', async () => {
    const elsewhere = '/srv/dns/libexec/unbounded-localdns-network';
    // A sibling of the legacy root is not under it.
    const sibling = `${paths.legacy}other/libexec/unbounded-localdns-network`;
    const content = `${goLocalDnsUnit(elsewhere)}# ExecStartPost=${sibling}\n`;
    await writeFile(unit, content);
    const lines: string[] = [];
    const recording = createLogger({ destination: { write: (line: string) => lines.push(line) } });
    const result = await rewriteLocalDnsUnit(paths.root, paths, recording);
    expect(result).toMatchObject({ changed: false, foreign: [elsewhere, elsewhere, sibling] });
    expect(await readFile(unit, 'utf8')).toBe(content);
    expect(lines.join('')).toContain('the LocalDNS unit names a helper outside the legacy root');
  });

  it('does not create the unit on a host without LocalDNS', async () => {
    expect(await rewriteLocalDnsUnit(paths.root, paths, log)).toBeUndefined();
    await expect(stat(unit)).rejects.toThrow(/ENOENT/);
  });

  it('a unit that cannot be read fails with its path and what to do', async () => {
    await mkdir(unit);
    await expect(rewriteLocalDnsUnit(paths.root, paths, log)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      message: expect.stringContaining(unit) as unknown,
      path: unit,
      hint: expect.stringContaining('restart the agent') as unknown,
    });
  });
});
