import type { AgentUpgradeRequest } from '@aks-flex-node/api';

/** An upgrade source after validation. */
export interface ParsedSource {
  /** The URL without query or fragment: the only form logged, stored or returned. */
  redactedUrl: string;
}

/** Progress of a download. */
export interface DownloadProgress {
  receivedBytes: number;
  totalBytes?: number;
}

/**
 * How the daemon gets the candidate binary of one kind of source: a release
 * archive (shared/archive in production) or a binary already on the host.
 */
export interface ArchiveHandler<
  S extends ParsedSource = ParsedSource,
  I = AgentUpgradeRequest['source'],
> {
  /** Validates the request's source before anything runs. Throws INVALID_ARGUMENT or UPGRADE_REFUSED. */
  parse(source: I): S;
  /** Makes the source local: `archivePath` is what `install` reads, removed by `cleanup`. */
  fetch(
    source: S,
    onProgress: (progress: DownloadProgress) => void,
  ): Promise<{ archivePath: string; cleanup: () => Promise<void> }>;
  /** Installs the candidate binary at `target` (the stage's name beside the slot), atomically. */
  install(source: S, archivePath: string, target: string): Promise<void>;
}
