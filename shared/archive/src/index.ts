/** Release archives: parse an upgrade source, download it, install its one member. */
export { downloadArchive } from './download-archive.js';
export { extractExactMember } from './extract-exact-member.js';
export { redactUrl } from './redact-url.js';
export { releaseArch, releaseArchiveMember, releaseArchiveName } from './release-archive-member.js';
export type { DownloadProgress } from './throttle-progress.js';
export { parseArchiveSource } from './archive-source.js';
export type { ArchiveSource } from './archive-source.js';
