import { lstat } from 'node:fs/promises';
import { installFile, linkThroughTemp, makeIoError, replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { AgentError, type Logger } from '@aks-flex-node/log';
import { candidateSlotFor, type AgentBinaryPaths } from './agent-binary-paths.js';
import { describeAgentLink, inspectAgentLink } from './agent-link.js';
import { isLinkTo, resolveIfPresent } from './resolve-link.js';

/** What {@link ensureAgentBinaryLayout} found and did. */
export interface LayoutResult {
  /** The slot (or plain binary) `current` resolves to afterwards. */
  current: string;
  lastGood: string;
  changed: boolean;
}

/**
 * Initialises the blue/green layout from what is there: a missing or dangling
 * `current` is pointed at the first executable among blue, green and the
 * plain binary (a plain binary is first kept in blue under that name, so the
 * public entry point can become a link without a loop); a missing `last-good` is pointed at
 * `current`'s target; the plain binary becomes a link to `current`.
 * Idempotent: a complete layout is left exactly as it is.
 *
 * Throws NOT_FOUND when no executable binary exists to start from.
 */
export async function ensureAgentBinaryLayout(
  paths: AgentBinaryPaths,
  log: Logger,
): Promise<LayoutResult> {
  let changed = false;
  // A `current` or `last-good` that cannot run (dangling, a directory, an
  // empty or non-executable file) counts as missing: systemd runs the agent
  // through `current`, and a rollback target that cannot run is none.
  let current = await runnableTarget(paths.current);
  let seededFromBinary = false;
  // A `current` that names the plain binary is an older single-binary layout:
  // treated as uninitialised, because the plain binary is about to become a link.
  if (current === undefined || current === paths.binary) {
    current ??= await pickSeed(paths);
    if (current === paths.binary) {
      seededFromBinary = true;
      // The slot gets the plain file's bytes under its own name, never the
      // plain path itself: the plain path is about to become a symlink to
      // `current`, and a symlink to itself would loop.
      await keepInSlot(paths.binary, paths.blue, log);
      current = paths.blue;
    }
    await replaceSymlinkAtomic(paths.current, current);
    log.info({ current }, 'pointed the current link at the agent binary');
    changed = true;
  }
  const lastGoodState = await inspectAgentLink(paths.lastGood);
  let lastGood = lastGoodState.kind === 'runnable' ? lastGoodState.target : undefined;
  if (lastGood === undefined || (lastGood === paths.binary && seededFromBinary)) {
    await replaceSymlinkAtomic(paths.lastGood, current);
    lastGood = current;
    // A last-good that could not run is damage (issue 22): warned with what it
    // was, so the journal says why the rollback target changed.
    if (lastGoodState.kind === 'missing' || lastGoodState.kind === 'runnable') {
      log.info({ lastGood }, 'pointed the last-good link at the current binary');
    } else {
      log.warn(
        { lastGood, link: paths.lastGood, was: describeAgentLink(lastGoodState) },
        `the last-good link ${paths.lastGood} could not run (${describeAgentLink(lastGoodState)}); pointed it at the current binary ${current}`,
      );
    }
    changed = true;
  } else if (lastGood === paths.binary) {
    // last-good is the plain file an older release ran, and current is a slot.
    // The plain file is about to become a link to current, so the rollback
    // target is first kept as a copy in the other slot.
    const spare = candidateSlotFor(paths, current);
    await keepInSlot(paths.binary, spare, log);
    await replaceSymlinkAtomic(paths.lastGood, spare);
    lastGood = spare;
    log.info({ lastGood }, 'kept the plain last-good binary in the spare slot');
    changed = true;
  }
  changed = (await linkBinaryToCurrent(paths, current, log)) || changed;
  return { current, lastGood, changed };
}

/**
 * Gives the plain binary's file a slot's name. A second hard link to the same
 * file when root owns it and it is exactly 0755, as the file the daemon has
 * just installed there is: the plain name is then renamed over by a symlink,
 * and the slot keeps the file, so the first start of a downloaded binary
 * writes its 131 MB once, not twice. (Nothing writes a slot in place: an
 * upgrade, a rollback, the move and a Go release each rename a new file over
 * a name, so the two names never part ways while both exist.) Otherwise, or
 * where the two names cannot share a file, a copy that root owns, 0755, as
 * before: a slot never keeps another owner's file or a looser mode, since
 * the agent runs it as root. Both go through a temporary name renamed into
 * place, so a kill leaves the slot absent or whole, and the temporary name
 * for the start sweep.
 */
async function keepInSlot(plain: string, slot: string, log: Logger): Promise<void> {
  let info;
  try {
    info = await lstat(plain);
  } catch (error) {
    throw makeIoError('inspect', plain, error, { object: `to keep it as ${slot}` });
  }
  const ours = info.isFile() && info.uid === 0 && (info.mode & 0o7777) === 0o755;
  if (ours && (await linkThroughTemp(plain, slot))) {
    log.info({ slot, from: plain }, 'gave the agent binary its slot name (a hard link)');
    return;
  }
  await installFile(plain, slot, { mode: 0o755 });
  log.info({ slot, from: plain }, 'copied the agent binary into its slot');
}

/** Where a link resolves when that is a binary that can run; otherwise undefined. */
async function runnableTarget(link: string): Promise<string | undefined> {
  const state = await inspectAgentLink(link);
  return state.kind === 'runnable' ? state.target : undefined;
}

/** What `current` starts from: last-good first (the binary known to have served), then the slots, then the plain binary. */
async function pickSeed(paths: AgentBinaryPaths): Promise<string> {
  const lastGood = await runnableTarget(paths.lastGood);
  if (lastGood !== undefined && lastGood !== paths.binary) return lastGood;
  for (const candidate of [paths.blue, paths.green, paths.binary]) {
    if ((await inspectAgentLink(candidate)).kind === 'runnable') return candidate;
  }
  throw new AgentError(
    'NOT_FOUND',
    `no executable agent binary found to initialise the layout under ${paths.root}`,
    {
      path: paths.binary,
      hint: 'install the agent again with `aks-flex-node start` or install.sh',
    },
  );
}

/**
 * Points the plain binary at the `current` link (the link, not the slot), so
 * units and operators that run the plain path follow every switch. Left alone
 * when `current` is the plain binary itself, as on a legacy install.
 */
async function linkBinaryToCurrent(
  paths: AgentBinaryPaths,
  current: string,
  log: Logger,
): Promise<boolean> {
  if (current === paths.binary) return false;
  if (
    (await resolveIfPresent(paths.binary)) === current &&
    (await isLinkTo(paths.binary, paths.current))
  ) {
    return false;
  }
  await replaceSymlinkAtomic(paths.binary, paths.current);
  log.info(
    { binary: paths.binary, current: paths.current },
    'linked the agent binary to the current link',
  );
  return true;
}
