import type { UpgradeSource } from '@aks-flex-node/archive';
import type { AgentUpgradeRequest, ArchiveSource, BinarySource } from '@aks-flex-node/api';
import { describe, expect, it } from 'vitest';
import type { ArchiveHandler } from './archive-handler.js';
import type { StagedBinary } from './staged-binaries.js';
import { combineUpgradeSources } from './upgrade-sources.js';

/** Handlers that record which one took each step. */
function recordingHandlers(calls: string[]) {
  const archives: ArchiveHandler<UpgradeSource, ArchiveSource> = {
    parse: (source) => {
      calls.push('archives.parse');
      return { url: new URL(source.url), redactedUrl: source.url };
    },
    fetch: () => {
      calls.push('archives.fetch');
      return Promise.resolve({ archivePath: '/a.tar.gz', cleanup: () => Promise.resolve() });
    },
    install: () => {
      calls.push('archives.install');
      return Promise.resolve();
    },
  };
  const binaries: ArchiveHandler<StagedBinary, BinarySource> = {
    parse: (source) => {
      calls.push('binaries.parse');
      return { binaryPath: source.binaryPath, redactedUrl: `file://${source.binaryPath}` };
    },
    fetch: (source) => {
      calls.push('binaries.fetch');
      return Promise.resolve({ archivePath: source.binaryPath, cleanup: () => Promise.resolve() });
    },
    install: () => {
      calls.push('binaries.install');
      return Promise.resolve();
    },
  };
  return { archives, binaries };
}

describe('combineUpgradeSources', () => {
  it.each<[string, AgentUpgradeRequest['source'], string]>([
    [
      'agentbinary§3.3 a URL goes to the release archives',
      { url: 'https://r.example/a.tar.gz' },
      'archives',
    ],
    ['agentbinary§3.6 a binary path goes to the staged binaries', { binaryPath: '/c' }, 'binaries'],
  ])('%s, for every step', async (_name, request, handler) => {
    const calls: string[] = [];
    const { archives, binaries } = recordingHandlers(calls);
    const sources = combineUpgradeSources(archives, binaries);
    const source = sources.parse(request);
    const { archivePath } = await sources.fetch(source, () => undefined);
    await sources.install(source, archivePath, '/slot');
    expect(calls).toEqual([`${handler}.parse`, `${handler}.fetch`, `${handler}.install`]);
  });
});
