/** Durable, crash-safe file system primitives for the host layout. */
export { canonicalPath } from './canonical-path.js';
export { checkBinaryRuns } from './check-binary-runs.js';
export { cleanPath } from './clean-path.js';
export { fileSha256 } from './file-sha256.js';
export { installFile, installOpenFile } from './install-file.js';
export { makeIoError } from './io-error.js';
export { exists } from './exists.js';
export { mkdirMode } from './mkdir-mode.js';
export { removeEmptyDir } from './remove-empty-dir.js';
export { removeIfEmpty } from './remove-if-empty.js';
export { removeIfExists } from './remove-if-exists.js';
export { removeOwned } from './remove-owned.js';
export { replaceSymlinkAtomic } from './replace-symlink-atomic.js';
export { mountFacts } from './mount-facts.js';
export type { MountFacts, MountFactsOptions } from './mount-facts.js';
export { syncDirectory } from './sync-directory.js';
export { syncFilesystem } from './sync-filesystem.js';
export { writeFileAtomic } from './write-file-atomic.js';
