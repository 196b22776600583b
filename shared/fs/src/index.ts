/** Durable, crash-safe file system primitives for the host layout. */
export { canonicalPath } from './canonical-path.js';
export { checkBinaryRuns } from './check-binary-runs.js';
export { cleanPath } from './clean-path.js';
export {
  fileDigest,
  fileIdentity,
  isRecordedCopy,
  rememberCopy,
  restoreFileDigests,
  saveFileDigests,
} from './file-digests.js';
export type { FileIdentity } from './file-digests.js';
export { fileSha256 } from './file-sha256.js';
export { installFile, installOpenFile } from './install-file.js';
export { corruptStampOf, linkAside } from './link-aside.js';
export { linkThroughTemp } from './link-through-temp.js';
export type { LinkThroughTempSteps } from './link-through-temp.js';
export { makeIoError } from './io-error.js';
export { lstat, readlink, realpath, stat } from './path-lookups.js';
export { exists } from './exists.js';
export { bytesFreedByReplacing, filesystemOf, findSpaceShortfall } from './space-for-writes.js';
export type { SpaceShortfall, SpaceStep } from './space-for-writes.js';
export { isRegularExecutable } from './is-regular-executable.js';
export { mkdirMode } from './mkdir-mode.js';
export { removeEmptyDir } from './remove-empty-dir.js';
export { removeIfEmpty } from './remove-if-empty.js';
export { removeIfExists } from './remove-if-exists.js';
export { removeOwned } from './remove-owned.js';
export { removeOwnedTree } from './remove-owned-tree.js';
export { findTemporaryFiles, removeTemporaryFiles } from './remove-temporary-files.js';
export { replaceSymlinkAtomic } from './replace-symlink-atomic.js';
export { runCommand, signalThatEndedCommand } from './run-command.js';
export { runBuiltin } from './run-builtin.js';
export type { CommandOptions, CommandResult, CommandRunner } from './run-command.js';
export { mountFacts } from './mount-facts.js';
export { pollUntil } from './poll-until.js';
export type { PollClock } from './poll-until.js';
export type { MountFacts, MountFactsOptions } from './mount-facts.js';
export { syncDirectory } from './sync-directory.js';
export { syncFilesystem } from './sync-filesystem.js';
export { targetOfTemporary, temporaryPathFor } from './temporary-name.js';
export { writeFileAtomic } from './write-file-atomic.js';
export { repairForWrite } from './write-repair.js';
