import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { readConfigJson } from '@aks-flex-node/config';
import { currentLinkFile, hostPaths, unitNames } from '@aks-flex-node/layout';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { createSystemctl, runBuiltin } from '@aks-flex-node/systemd';
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
  const loadState = await unitLoadState(unitNames.agent);
  // The journal is the agent unit's only where systemd runs it: elsewhere
  // (no bus) it may hold another system's lines.
  if (loadState === 'not-found') {
    const reset = await lastReset(hostPaths.operationsDir);
    if (reset !== undefined) return resetHost(reset);
  }
  return diagnoseAgentUnit(current, loadState) ?? (await diagnoseConfig(loadState === 'loaded'));
}

/** The newest reset's record, when one is on disk (records outlive the reset). */
async function lastReset(dir: string): Promise<{ id: string; at: string } | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  let newest: { id: string; at: string } | undefined;
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    try {
      // JSON.parse, not the schema: the status bundle holds no zod, and only two fields are read.
      const record = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as {
        id?: unknown;
        kind?: unknown;
        state?: unknown;
        finishedAt?: unknown;
      };
      if (record.kind !== 'reset' || record.state !== 'succeeded') continue;
      if (typeof record.id !== 'string' || typeof record.finishedAt !== 'string') continue;
      if (newest === undefined || record.finishedAt > newest.at) {
        newest = { id: record.id, at: record.finishedAt };
      }
    } catch {
      // A torn record says nothing of a reset; `operations` reports it.
    }
  }
  return newest;
}

/**
 * After a reset the agent unit is gone by design, not broken: no daemon
 * runs (DAEMON_UNREACHABLE), and the next step is the rejoin, which `start`
 * does from the binary the reset kept (it writes the units again and uses
 * the config the reset kept).
 */
function resetHost(reset: { id: string; at: string }): AgentError {
  return new AgentError(
    'DAEMON_UNREACHABLE',
    `no agent runs on this host: reset ${reset.id} removed its units at ${reset.at}`,
    {
      path: path.join(hostPaths.unitDir, unitNames.agent),
      hint: 'to rejoin, run `aks-flex-node start` (it writes the units again and starts the agent with the config the reset kept)',
    },
  );
}

/** Systemd's verdict on the agent unit: a missing or unparseable unit file means nothing can start the daemon. */
function diagnoseAgentUnit(current: string, loadState: string | undefined): AgentError | undefined {
  const unitFile = path.join(hostPaths.unitDir, unitNames.agent);
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
 * say (no bus): then nothing is claimed about the unit. Through the hot
 * roles' runner: the status bundle holds neither execa nor pino.
 */
async function unitLoadState(unit: string): Promise<string | undefined> {
  const systemctl = createSystemctl({
    log: { debug: () => undefined },
    run: runBuiltin,
    timeoutMs: 10_000,
  });
  try {
    const state = (await systemctl.show(unit, ['LoadState'])).trim().replace(/^LoadState=/, '');
    return state === '' ? undefined : state;
  } catch {
    // No bus, no systemctl: systemd cannot say, and nothing is claimed.
    return undefined;
  }
}

/**
 * The config as the daemon reads it first (readAgentConfig's JSON half: the
 * status bundle holds no zod). The daemon exits on what it throws, before it
 * serves; a torn config it restores from its last-good copy at the next start
 * (docs/upgrades.md), so what is named here is the one it could not. A config
 * that parses but fails the schema is named by the daemon's own last words in
 * the journal, when they are its latest error.
 */
async function diagnoseConfig(unitLoaded: boolean): Promise<AgentError | undefined> {
  let failure: AgentError | undefined;
  try {
    await readConfigJson(hostPaths.configFile);
    failure = unitLoaded ? await schemaFailureInJournal(hostPaths.configFile) : undefined;
  } catch (error) {
    if (!isAgentError(error, 'INVALID_CONFIG')) return undefined;
    failure = error;
  }
  if (failure === undefined) return undefined;
  return new AgentError(
    'INVALID_CONFIG',
    `the agent exits at start, so nothing serves status: ${failure.message}`,
    {
      path: hostPaths.configFile,
      cause: failure,
      hint: `${failure.hint ?? 'correct the file'}; the agent retries every 30 s, or run \`systemctl restart ${unitNames.agent}\``,
    },
  );
}

/**
 * The daemon's refusal of a config that fails the schema, when it is the
 * latest error line the agent unit logged: the daemon prints
 * "error: <config> is not a valid config: …" and exits.
 */
async function schemaFailureInJournal(configFile: string): Promise<AgentError | undefined> {
  const lines = await recentAgentJournal();
  const refusal = `error: ${configFile} is not a valid config`;
  const latestError = lines.findLast((line) => line.startsWith('error: '));
  if (latestError?.startsWith(refusal) !== true) return undefined;
  const at = lines.lastIndexOf(latestError);
  // The schema's own lines follow the first (the field and what it must be).
  const detail = lines
    .slice(at + 1)
    .filter((line) => /^\s*(\u2716|\u2192)/.test(line))
    .join(' ');
  return new AgentError(
    'INVALID_CONFIG',
    `${latestError.slice('error: '.length)}${detail === '' ? '' : ` ${detail}`}`,
    {
      path: configFile,
      hint: `correct the fields named above in ${configFile} (\`journalctl -u ${unitNames.agent} -n 20\` shows the daemon's refusal)`,
    },
  );
}

/** The agent unit's last journal lines; none when journalctl cannot say. */
async function recentAgentJournal(): Promise<string[]> {
  const args = [
    '--unit',
    unitNames.agent,
    '--lines',
    '20',
    '--output',
    'cat',
    '--no-pager',
    '--quiet',
  ];
  const result = await runBuiltin('journalctl', args, 10_000).catch(() => undefined);
  return result?.exitCode === 0 ? result.stdout.split('\n') : [];
}
