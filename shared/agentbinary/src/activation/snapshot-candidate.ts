import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { makeIoError } from '@aks-flex-node/fs';
import {
  hostCandidateTrust,
  openTrustedCandidate,
  refuseSharedStaging,
  type CandidateTrust,
} from '../upgrade/candidate-source.js';

/** A private copy of a candidate binary. */
export interface CandidateSnapshot {
  /** `<parent>/host-agent-activation-<random>/candidate`. */
  readonly path: string;
  readonly size: number;
  /** Removes the private directory; safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Pins a candidate's bytes (spec agentbinary §3.6.2 step 3; issue 28 item 2):
 * the file is opened once and judged through that descriptor (a regular
 * executable that only root can change, in directories only root can
 * change), and its content is copied into a private directory (0700) under
 * `parentDir`, which must itself be root-only. Only that copy is ever run
 * or installed: replacing the source afterwards, or swapping a link for it
 * between a check and a read, cannot change what runs as root.
 *
 * `trust` is the host's rule in production; unit tests stop it at their
 * scratch directory. Throws UPGRADE_REFUSED (unusable or untrusted source,
 * a shared staging directory) or HOST_ROOT_IO.
 */
export async function snapshotCandidate(
  source: string,
  parentDir: string,
  trust: CandidateTrust = hostCandidateTrust,
): Promise<CandidateSnapshot> {
  const { handle: input, size } = await openTrustedCandidate(source, trust);
  try {
    await mkdir(parentDir, { recursive: true, mode: 0o700 });
    // Checked after the mkdir: an existing directory keeps its owner and mode.
    await refuseSharedStaging(parentDir, trust);
    // mkdtemp creates 0700, and inside a root-only parent no one else can plant the name.
    const dir = await mkdtemp(path.join(parentDir, 'host-agent-activation-')).catch(
      (error: unknown) => {
        throw makeIoError('create a private directory in', parentDir, error);
      },
    );
    const dispose = () => rm(dir, { recursive: true, force: true });
    const snapshot = path.join(dir, 'candidate');
    try {
      // Read from the descriptor checked above, from its start; never by path again.
      await pipeline(
        input.createReadStream({ start: 0, end: size - 1, autoClose: false }),
        await open(snapshot, 'wx', 0o700).then((output) => output.createWriteStream()),
      );
    } catch (error) {
      await dispose();
      throw makeIoError('copy the candidate', source, error, { object: `to ${snapshot}` });
    }
    return { path: snapshot, size, dispose };
  } finally {
    await input.close();
  }
}
