import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { releaseArchiveMember, type DownloadProgress } from '@aks-flex-node/archive';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createCandidateFetcher, parseUpgradeSource } from './candidate-source.js';

/** A `.tar.gz` with one member, as `tar` (and the Go release pipeline) writes it. */
async function releaseArchive(tmp: string, member: string): Promise<string> {
  const content = path.join(tmp, 'content');
  await mkdir(content);
  await writeFile(path.join(content, member), '#!/bin/sh\necho candidate\n', { mode: 0o755 });
  const archive = path.join(tmp, 'aks-flex-node-linux-amd64.tar.gz');
  await promisify(execFile)('tar', ['-czf', archive, '-C', content, member]);
  return archive;
}

async function scratch() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'fetch-candidate-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const slotDir = path.join(tmp, 'lib/aks-flex-node');
  await mkdir(slotDir, { recursive: true });
  return { tmp, downloads: path.join(tmp, 'downloads'), target: path.join(slotDir, '.staged') };
}

describe('createCandidateFetcher: a release archive', () => {
  it('agentbinary§3.3 the one member is extracted at the target, and the downloaded archive is removed', async () => {
    const { tmp, downloads, target } = await scratch();
    const archive = await releaseArchive(tmp, releaseArchiveMember());
    const progress: DownloadProgress[] = [];
    const order: string[] = [];
    await createCandidateFetcher(downloads)(
      parseUpgradeSource({ url: pathToFileURL(archive).href }),
      target,
      {
        onProgress: (event) => {
          progress.push(event);
          order.push('progress');
        },
        onExtracting: () => order.push('extracting'),
      },
    );
    expect(await readFile(target, 'utf8')).toBe('#!/bin/sh\necho candidate\n');
    expect(progress.at(-1)?.receivedBytes).toBeGreaterThan(0);
    // Extracting is reported once, after the last byte arrived.
    expect(order.filter((step) => step === 'extracting')).toEqual(['extracting']);
    expect(order.at(-1)).toBe('extracting');
    expect(await readdir(downloads)).toEqual([]);
  });

  it('agentbinary§6.5 an archive without the member is refused, writes no target and leaves no archive', async () => {
    const { tmp, downloads, target } = await scratch();
    const archive = await releaseArchive(tmp, 'other-agent');
    const fetching = createCandidateFetcher(downloads)(
      parseUpgradeSource({ url: pathToFileURL(archive).href }),
      target,
      { onProgress: () => undefined, onExtracting: () => undefined },
    );
    await expect(fetching).rejects.toMatchObject({ code: 'UPGRADE_REFUSED' });
    await expect(access(target)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(downloads)).toEqual([]);
  });
});
