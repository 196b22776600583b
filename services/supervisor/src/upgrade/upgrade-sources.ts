import type { UpgradeSource } from '@aks-flex-node/archive';
import type { ArchiveSource, BinarySource } from '@aks-flex-node/api';
import type { ArchiveHandler } from './archive-handler.js';
import type { StagedBinary } from './staged-binaries.js';

/** A parsed source, tagged with the handler that takes it. */
export type RoutedSource =
  (UpgradeSource & { kind: 'archive' }) | (StagedBinary & { kind: 'binary' });

/**
 * The daemon's one source handler: a request naming `url` goes to the
 * release archives, one naming `binaryPath` to the staged binaries. The
 * request schema admits exactly one of the two.
 */
export function combineUpgradeSources(
  archives: ArchiveHandler<UpgradeSource, ArchiveSource>,
  binaries: ArchiveHandler<StagedBinary, BinarySource>,
): ArchiveHandler<RoutedSource> {
  return {
    parse: (source) =>
      'binaryPath' in source
        ? { ...binaries.parse(source), kind: 'binary' }
        : { ...archives.parse(source), kind: 'archive' },
    precheck: async (source) => {
      if (source.kind === 'binary') await binaries.precheck?.(source);
      else await archives.precheck?.(source);
    },
    fetch: (source, onProgress, signal) =>
      source.kind === 'binary'
        ? binaries.fetch(source, onProgress)
        : archives.fetch(source, onProgress, signal),
    install: (source, archivePath, slot) =>
      source.kind === 'binary'
        ? binaries.install(source, archivePath, slot)
        : archives.install(source, archivePath, slot),
  };
}
