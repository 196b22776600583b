import { execFile } from 'node:child_process';
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  currentLinkFile,
  hostPaths,
  lastGoodLinkFile,
  reinstallCommand,
} from '@aks-flex-node/layout';
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
  return new Promise((resolve) => {
    execFile(binary, ['version'], { timeout: versionTimeoutMs, killSignal: 'SIGKILL' }, (error) => {
      if (error === null) resolve(undefined);
      else resolve(`${binary} does not run (${describe(error)})`);
    });
  });
}

function describe(error: { code?: string | number | null; signal?: string | null }): string {
  if (typeof error.code === 'string') return error.code;
  if (typeof error.signal === 'string') return `killed by ${error.signal}`;
  return `exit code ${String(error.code)}`;
}
