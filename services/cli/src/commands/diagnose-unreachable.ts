import { execFile } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { readConfigJson } from '@aks-flex-node/config';
import { currentLinkFile, hostPaths, unitNames } from '@aks-flex-node/layout';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { diagnoseAgentBinaries } from './diagnose-binaries.js';

/**
 * Why no daemon answers, when the host itself says so, in the order an
 * operator must repair it: no agent binary runs (reinstall), systemd cannot
 * load the agent unit (`<current> start` writes it again), the config the
 * daemon reads first is invalid (fix that file). Undefined when none of these
 * holds, or no agent is installed here (no `current`): then the daemon is
 * down for another reason, and DAEMON_UNREACHABLE's own hint applies.
 * Only the CLI's status runs it, and only once the daemon did not answer.
 */
export async function diagnoseUnreachable(): Promise<AgentError | undefined> {
  const broken = await diagnoseAgentBinaries();
  if (broken !== undefined) return broken;
  const current = path.join(hostPaths.root, currentLinkFile);
  try {
    await lstat(current);
  } catch {
    return undefined;
  }
  return (await diagnoseAgentUnit(current)) ?? (await diagnoseConfig());
}

/** Systemd's verdict on the agent unit: a missing or unparseable unit file means nothing can start the daemon. */
async function diagnoseAgentUnit(current: string): Promise<AgentError | undefined> {
  const unitFile = path.join(hostPaths.unitDir, unitNames.agent);
  const loadState = await unitLoadState(unitNames.agent);
  if (loadState === undefined || loadState === 'loaded') return undefined;
  const what = loadState === 'not-found' ? 'is missing' : `cannot be loaded (${loadState})`;
  return new AgentError(
    'SYSTEMD_FAILED',
    `the agent unit ${unitFile} ${what}, so systemd cannot start the agent and nothing serves status`,
    { path: unitFile, hint: `write the units again and start the agent with: ${current} start` },
  );
}

/**
 * The unit's LoadState from `systemctl show`, undefined when systemd cannot
 * say (no bus): then nothing is claimed about the unit. execFile, not the
 * Systemctl of shared/systemd: the status bundle holds neither execa nor pino.
 */
function unitLoadState(unit: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      'systemctl',
      ['show', '--property=LoadState', '--value', unit],
      { timeout: 10_000 },
      (error, stdout) => {
        const state = stdout.trim();
        resolve(error === null && state !== '' ? state : undefined);
      },
    );
  });
}

/**
 * The config as the daemon reads it first (readAgentConfig's JSON half: the
 * status bundle holds no zod, so a schema error shows in the journal only).
 * The daemon exits on what it throws, before it serves.
 */
async function diagnoseConfig(): Promise<AgentError | undefined> {
  try {
    await readConfigJson(hostPaths.configFile);
    return undefined;
  } catch (error) {
    if (!isAgentError(error, 'INVALID_CONFIG')) return undefined;
    return new AgentError(
      'INVALID_CONFIG',
      `the agent exits at start, so nothing serves status: ${error.message}`,
      {
        path: hostPaths.configFile,
        cause: error,
        hint: `${error.hint ?? 'correct the file'}; the agent retries every 30 s, or run \`systemctl restart ${unitNames.agent}\``,
      },
    );
  }
}
