import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { makeIoError } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';

/** Agent binaries are capped as the archive members are (spec agentbinary §3.1). */
export const maxCandidateBytes = 256 * 1024 * 1024;

/** A private copy of a candidate binary. */
export interface CandidateSnapshot {
  /** `<parent>/host-agent-activation-<random>/candidate`. */
  readonly path: string;
  readonly size: number;
  /** Removes the private directory; safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Pins a candidate's bytes (spec agentbinary §3.6.2 step 3): the file is
 * opened once, the *open descriptor* is checked (a regular file with an
 * execute bit), and its content is copied into a private directory (0700)
 * under `parentDir`. Replacing the source afterwards, or swapping a link for
 * it between a check and a read, cannot change what gets installed.
 *
 * Throws UPGRADE_REFUSED (not a regular executable, too large) or HOST_ROOT_IO.
 */
export async function snapshotCandidate(
  source: string,
  parentDir: string,
): Promise<CandidateSnapshot> {
  let input: FileHandle;
  try {
    // O_NONBLOCK: a FIFO named as the candidate must be refused, not block the open.
    input = await open(source, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw makeIoError('open the candidate', source, error, { code: 'UPGRADE_REFUSED' });
  }
  try {
    const size = await checkOpenCandidate(input, source);
    await mkdir(parentDir, { recursive: true, mode: 0o700 });
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

async function checkOpenCandidate(input: FileHandle, source: string): Promise<number> {
  const info = await input.stat();
  const refuse = (why: string) =>
    new AgentError('UPGRADE_REFUSED', `the candidate ${source} ${why}`, {
      path: source,
      hint: `name an aks-flex-node release binary; check it with \`ls -lL ${source}\``,
    });
  if (!info.isFile()) throw refuse('is not a regular file');
  if ((info.mode & 0o111) === 0) throw refuse('has no execute bit');
  if (info.size === 0) throw refuse('is empty');
  if (info.size > maxCandidateBytes) {
    throw refuse(
      `is ${info.size} bytes, over the ${maxCandidateBytes}-byte limit for an agent binary`,
    );
  }
  return info.size;
}
