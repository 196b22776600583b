import { runCommand } from '@aks-flex-node/fs';
import type { Logger } from '@aks-flex-node/log';
import { findOnPath } from './find-on-path.js';

/** A relabel of the host root takes seconds; one that takes this long is stuck. */
const relabelTimeoutMs = 300_000;

/** Restores SELinux labels under a root; injectable so tests record the root. */
export type Relabel = (root: string, log: Logger) => Promise<void>;

/** Options for {@link restoreLabels}. */
export interface RestoreLabelsOptions {
  /** Where to look for `restorecon`; defaults to `PATH`. */
  searchPath?: string;
}

/**
 * Runs `restorecon -R <root>` when restorecon is on PATH. A new directory
 * takes its parent's label (`usr_t` under `/opt`), while the policy expects
 * `bin_t` for binaries, and files created later inherit the directory's
 * label. A host without restorecon has no SELinux to satisfy. Never throws:
 * a failed relabel is logged, because the agent may still run (permissive
 * mode), and the binary check before any unit names the root catches a
 * denial.
 */
export async function restoreLabels(
  root: string,
  log: Logger,
  options: RestoreLabelsOptions = {},
): Promise<void> {
  const restorecon = await findOnPath('restorecon', options.searchPath ?? process.env.PATH ?? '');
  if (restorecon === undefined) return;
  const failed =
    'restoring SELinux labels under the host root failed; continuing with the inherited labels';
  try {
    const result = await runCommand(restorecon, ['-R', root], relabelTimeoutMs);
    if (result.exitCode !== 0) {
      log.warn(
        {
          exitCode: result.exitCode,
          root,
          restorecon,
          output: `${result.stdout}${result.stderr}`.trim(),
        },
        failed,
      );
    }
  } catch (error) {
    log.warn({ err: error, root, restorecon }, failed);
  }
}
