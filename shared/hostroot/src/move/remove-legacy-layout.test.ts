import { lstat, readdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentOnlyDirs, hostLayoutFiles } from '@aks-flex-node/layout';
import { legacyHost, log, touch } from '../test-fixtures.js';
import { removeLegacyLayout } from './remove-legacy-layout.js';

const layout = { files: hostLayoutFiles(), dirs: agentOnlyDirs() };

describe('removeLegacyLayout: pass 2 of the move, and reset finishing one', () => {
  it('removes every layout file that is there, then the directories they alone held, and keeps the rest', async () => {
    const host = await legacyHost();
    // A pass 2 that stopped after its first removal.
    await rm(path.join(host.legacy, 'bin/aks-flex-node'));
    const steps: string[] = [];
    const removed = await removeLegacyLayout(host.legacy, layout, log, {
      fileRemoved: () => steps.push('file'),
      dirsRemoved: () => steps.push('dirs'),
      synced: () => steps.push('synced'),
    });
    expect(removed).toEqual(
      hostLayoutFiles()
        .filter((rel) => rel !== 'bin/aks-flex-node')
        .map((rel) => path.join(host.legacy, rel)),
    );
    // One step per file, present or not, so a failpoint can stop between any two.
    expect(steps).toEqual([...hostLayoutFiles().map(() => 'file'), 'dirs', 'synced']);
    await expect(lstat(path.join(host.legacy, 'lib/aks-flex-node'))).rejects.toThrow(/ENOENT/);
    // bin and libexec are shared; what is not the agent's stays.
    expect(await readdir(path.join(host.legacy, 'bin'))).toEqual(['other-tool']);
    expect(await readdir(path.join(host.legacy, 'libexec'))).toEqual([]);
  });

  it("keeps a directory that holds an operator's file, and a second run finds nothing to remove", async () => {
    const host = await legacyHost();
    await touch(path.join(host.legacy, 'lib/aks-flex-node/operator.conf'), 'kept', 0o644);
    await removeLegacyLayout(host.legacy, layout, log);
    expect(await readdir(path.join(host.legacy, 'lib/aks-flex-node'))).toEqual(['operator.conf']);
    expect(await removeLegacyLayout(host.legacy, layout, log)).toEqual([]);
  });

  it("issue22#5 removes a stopped write's temporary files under the legacy root first, keeping an operator's", async () => {
    const host = await legacyHost();
    const temps = [
      path.join(host.legacy, 'bin/.aks-flex-node.0123456789ab.tmp'),
      path.join(host.legacy, 'bin/.unbounded-agent-nspawn-lifecycle.abcdefabcdef.tmp'),
      path.join(host.legacy, 'lib/aks-flex-node/.aks-flex-node-current.0123456789ab.tmp'),
    ];
    await touch(temps[0] ?? '', 'partial seed', 0o600);
    await touch(temps[1] ?? '', 'partial helper', 0o600);
    await symlink('aks-flex-node-blue', temps[2] ?? '');
    const operators = path.join(host.legacy, 'bin/.other-tool.0123456789ab.tmp');
    await touch(operators, 'kept', 0o644);
    await removeLegacyLayout(host.legacy, layout, log);
    for (const temp of temps) await expect(lstat(temp)).rejects.toThrow(/ENOENT/);
    // The slot directory held only the layout and a temp, so it goes too.
    await expect(lstat(path.join(host.legacy, 'lib/aks-flex-node'))).rejects.toThrow(/ENOENT/);
    expect((await readdir(path.join(host.legacy, 'bin'))).sort()).toEqual([
      '.other-tool.0123456789ab.tmp',
      'other-tool',
    ]);
  });
});
