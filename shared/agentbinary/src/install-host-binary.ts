import {
  checkBinaryRuns,
  fileIdentity,
  installFile,
  isRegularExecutable,
  removeOwned,
  type FileIdentity,
} from '@aks-flex-node/fs';
import { AgentError, type Logger } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from './agent-binary-paths.js';

/** Options for {@link installHostBinary}. */
export interface InstallHostBinaryOptions {
  /** The running executable, to copy. */
  executable: string;
  /** Creates the root's subdirectories (0755, relabelled); shared/hostroot's prepare. */
  prepare: () => Promise<void>;
  log: Logger;
}

/**
 * The copy of the running executable that {@link installHostBinary} made:
 * the file by its device and inode, which it keeps under whatever name the
 * layout later gives it (a slot), and the executable's identity when the
 * copy read it. The nspawn helper is linked to that file where it cannot be
 * linked to the executable itself (another file system), instead of being
 * a third copy of the same bytes.
 */
export interface ExecutableCopy {
  executable: string;
  executableBefore: FileIdentity;
  dev: string;
  ino: string;
}

/**
 * Puts the running binary at the root's plain binary path unless a usable one
 * is there, and returns the copy it made (undefined when it made none). The copy is run once before anything relies on it: the agent unit
 * is started without waiting for the binary to prove itself, so this is the
 * last point that can notice a root that cannot run programs (noexec).
 *
 * Throws NOT_EXECUTABLE (the copy is removed again) or HOST_ROOT_IO.
 */
export async function installHostBinary(
  paths: AgentBinaryPaths,
  options: InstallHostBinaryOptions,
): Promise<ExecutableCopy | undefined> {
  if (await isRegularExecutable(paths.binary)) return undefined;
  await options.prepare();
  // Before the copy reads it: the helper later trusts the copy's bytes as
  // the executable's only while the executable still has this identity.
  const executableBefore = await fileIdentity(options.executable);
  await installFile(options.executable, paths.binary, { mode: 0o755 });
  try {
    await checkBinaryRuns(paths.binary);
  } catch (error) {
    await removeOwned(paths.binary);
    throw new AgentError(
      'NOT_EXECUTABLE',
      `the agent binary copied to ${paths.binary} does not run there`,
      {
        path: paths.binary,
        cause: error,
        hint: `${paths.root} must not be on a filesystem mounted noexec; check with \`findmnt -T ${paths.root}\``,
      },
    );
  }
  options.log.info(
    { binary: paths.binary, from: options.executable },
    'installed the agent binary under the host root',
  );
  const { dev, ino } = await fileIdentity(paths.binary);
  return { executable: options.executable, executableBefore, dev, ino };
}
