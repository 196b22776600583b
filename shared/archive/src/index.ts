/** Release archives: parse an upgrade source, download it, install its one member. */
export { defaultDownloadTimeoutMs, defaultMaxArchiveBytes } from './download-options.js';
export type { DownloadArchiveOptions } from './download-options.js';
export { downloadArchive } from './download-archive.js';
export type { DownloadedArchive } from './download-archive.js';
export { defaultMaxExtractedBytes } from './extract-options.js';
export type { ExtractExactMemberOptions } from './extract-options.js';
export { extractExactMember } from './extract-exact-member.js';
export { redactUrl } from './redact-url.js';
export { releaseArch, releaseArchiveMember, releaseArchiveName } from './release-archive-member.js';
export type { DownloadProgress } from './throttle-progress.js';
export { parseUpgradeSource } from './upgrade-source.js';
export type { UpgradeSource, UpgradeSourceInput } from './upgrade-source.js';
