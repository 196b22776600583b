import { checkBinaryRuns, installFile, removeOwned } from '@aks-flex-node/fs';
import { AgentError, type Logger } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from './agent-binary-paths.js';
import { isRegularExecutable } from './ensure-layout.js';

/** Options for {@link installHostBinary}. */
export interface InstallHostBinaryOptions {
  /** The running executable, to copy. */
  executable: string;
  /** Creates the root's subdirectories (0755, relabelled); shared/hostroot's prepare. */
  prepare: () => Promise<void>;
  log: Logger;
}

/**
 * Puts the running binary at the root's plain binary path unless a usable one
 * is there. The copy is run once before anything relies on it: the agent unit
 * is started without waiting for the binary to prove itself, so this is the
 * last point that can notice a root that cannot run programs (noexec).
 *
 * Throws NOT_EXECUTABLE (the copy is removed again) or HOST_ROOT_IO.
 */
export async function installHostBinary(
  paths: AgentBinaryPaths,
  options: InstallHostBinaryOptions,
): Promise<boolean> {
  if (await isRegularExecutable(paths.binary)) return false;
  await options.prepare();
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
  return true;
}
