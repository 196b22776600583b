import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { reinstallCommand } from '@aks-flex-node/layout';
import { AgentError, type Logger } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import { describeAgentLink, inspectAgentLink, type AgentLinkState } from '../agent-link.js';

/** What {@link convergeCurrentLink} found or did. */
export type CurrentConvergence =
  | { kind: 'runnable'; current: string }
  | { kind: 'repointed'; current: string; was: AgentLinkState };

/**
 * Points a `current` that cannot run (missing, dangling, a directory, an
 * empty or non-executable file) at a runnable last-good. systemd runs the
 * agent through `current`, so until this happens the agent cannot start at
 * all; no binary is downgraded by it, since the one `current` names cannot
 * run. A runnable `current` is left alone: choosing between two binaries
 * that run is the judgement's business, not this one's. The caller holds
 * the activation lock.
 *
 * Throws NOT_EXECUTABLE, naming both links and the one command that repairs
 * the host (the reinstall line), when last-good cannot run either.
 */
export async function convergeCurrentLink(
  paths: AgentBinaryPaths,
  log: Logger,
): Promise<CurrentConvergence> {
  const current = await inspectAgentLink(paths.current);
  if (current.kind === 'runnable') return { kind: 'runnable', current: current.target };
  const lastGood = await inspectAgentLink(paths.lastGood);
  if (lastGood.kind !== 'runnable') throw noRunnableBinary(paths, current, lastGood);
  await replaceSymlinkAtomic(paths.current, lastGood.target);
  failpoint(failpoints.currentRepointed);
  log.warn(
    { path: paths.current, was: describeAgentLink(current), current: lastGood.target },
    'the current link could not run; pointed it at the last-good binary',
  );
  return { kind: 'repointed', current: lastGood.target, was: current };
}

/**
 * The refusal when neither link runs: nothing is guessed, and the hint is the
 * one command that repairs the host as printed (shared/layout's reinstall
 * line, the same the recovery shim and `status` print).
 */
function noRunnableBinary(
  paths: AgentBinaryPaths,
  current: AgentLinkState,
  lastGood: AgentLinkState,
): AgentError {
  const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
  return new AgentError(
    'NOT_EXECUTABLE',
    `no runnable agent binary: ${paths.current} is ${describeAgentLink(current)} and ${paths.lastGood} is ${describeAgentLink(lastGood)}`,
    { path: paths.current, hint: `reinstall the agent with: ${reinstallCommand(arch)}` },
  );
}
