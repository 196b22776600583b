import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  currentLinkFile,
  hostPaths,
  lastGoodLinkFile,
  reinstallCommand,
} from '@aks-flex-node/layout';
import { runBuiltin } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';

/** How long a binary may take to answer `version` before it counts as broken. */
const versionTimeoutMs = 10_000;

/**
 * Why no daemon answers when the reason is that no agent binary runs: both
 * `current` and `last-good` (through the host root, links followed) fail to
 * answer `version`. Then nothing on the host can serve status or recover the
 * agent, and the operator must reinstall; the error says so with the command.
 * Undefined when either runs (the daemon is down for another reason).
 * Only the CLI's status runs it, and only once the daemon did not answer.
 */
export async function diagnoseAgentBinaries(): Promise<AgentError | undefined> {
  const currentLink = path.join(hostPaths.root, currentLinkFile);
  const [current, lastGood] = await Promise.all([
    whyNotRunning(currentLink),
    whyNotRunning(path.join(hostPaths.root, lastGoodLinkFile)),
  ]);
  if (current === undefined || lastGood === undefined) return undefined;
  const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
  return new AgentError(
    'NOT_EXECUTABLE',
    `no agent binary on this host runs, so nothing serves status or can recover the agent: ` +
      `current ${current}; last-good ${lastGood}`,
    {
      path: currentLink,
      hint: `reinstall the agent with: ${reinstallCommand(arch)}`,
    },
  );
}

/**
 * Undefined when the link's binary answers `version`, or when there is no
 * link (no agent installed here: the daemon is simply absent); otherwise
 * what it names and why it fails.
 */
async function whyNotRunning(link: string): Promise<string | undefined> {
  try {
    await lstat(link);
  } catch {
    return undefined;
  }
  let binary: string;
  try {
    binary = await realpath(link);
  } catch (error) {
    return `${link} does not name a binary (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  try {
    const { exitCode } = await runBuiltin(binary, ['version'], versionTimeoutMs, {
      killSignal: 'SIGKILL',
    });
    return exitCode === 0 ? undefined : `${binary} does not run (exit code ${exitCode})`;
  } catch (error) {
    return `${binary} does not run (${describe(error)})`;
  }
}

/** Why the runner could not run it: the errno (ENOENT, EACCES, ENOEXEC) or the signal that killed it. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; signal?: unknown } }).cause ?? {};
  if (typeof cause.code === 'string') return cause.code;
  if (typeof cause.signal === 'string') return `killed by ${cause.signal}`;
  return String(error);
}
