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
  /**
   * Makes the source local: `archivePath` is what `install` reads, removed by
   * `cleanup`. `signal` cancels it (a download stops at once).
   */
  fetch(
    source: S,
    onProgress: (progress: DownloadProgress) => void,
    signal?: AbortSignal,
  ): Promise<{ archivePath: string; cleanup: () => Promise<void> }>;
  /**
   * Checks, before the request is answered, what can be checked at once (a
   * named binary exists and is usable), so a bad source is refused at the
   * door instead of failing in the background. Throws UPGRADE_REFUSED.
   */
  precheck?(source: S): Promise<void>;
  /** Installs the candidate binary at `target` (the stage's name beside the slot), atomically. */
  install(source: S, archivePath: string, target: string): Promise<void>;
}
