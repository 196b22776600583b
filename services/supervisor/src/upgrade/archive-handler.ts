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

/** How the daemon gets a release archive and its one member; shared/archive in production. */
export interface ArchiveHandler<S extends ParsedSource = ParsedSource> {
  /** Validates the request's source before anything runs. Throws INVALID_ARGUMENT or UPGRADE_REFUSED. */
  parse(source: AgentUpgradeRequest['source']): S;
  fetch(
    source: S,
    onProgress: (progress: DownloadProgress) => void,
  ): Promise<{ archivePath: string; cleanup: () => Promise<void> }>;
  install(archivePath: string, slot: string): Promise<void>;
}
