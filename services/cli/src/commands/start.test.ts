import { mkdir, mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentBinaryPathsUnder } from '@aks-flex-node/agentbinary';
import { statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import { defaultAgentConfig } from '@aks-flex-node/config';
import { hostPathsUnder, unitNames, type HostPaths } from '@aks-flex-node/layout';
import { acquireActivationLock } from '@aks-flex-node/lock';
import { AgentError, createLogger, createSilentLogger } from '@aks-flex-node/log';
import type { Systemctl } from '@aks-flex-node/systemd';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startAgent, type StartDeps } from './start.js';

const log = createSilentLogger();
const units = `${unitNames.agentSocket} ${unitNames.agent}`;

/** A release binary as `start` runs from: it answers `version` and `version --json`. */
const releaseScript = `#!/bin/sh
echo '{"version":"v1","commit":"c0ffee","arch":"amd64","node":"24","capabilities":["host-root"]}'
`;

/** The status a started daemon answers, checked against the wire schema. */
function daemonStatus(paths: HostPaths): StatusResponse {
  return statusResponseSchema.parse({
    daemon: {
      pid: 4242,
      uptimeSeconds: 1,
      executable: agentBinaryPathsUnder(paths.root).blue,
      socket: 'systemd',
      socketPath: paths.socket,
    },
    version: { version: 'v1', commit: 'c0ffee', arch: 'amd64', node: '24', capabilities: [] },
    hostRoot: {
      path: paths.root,
      resolved: paths.root,
      planned: paths.root,
      state: 'installed',
      legacyReleased: true,
    },
    activationInProgress: false,
    startup: { gate: 'open' },
  });
}

const unreachable = () =>
  new AgentError('DAEMON_UNREACHABLE', 'nothing answers on the socket', { path: 'agent.sock' });

interface FakeHostOptions {
  /** Whether a daemon answers before start runs. */
  answering?: boolean;
  /** How many polls after `systemctl start` the daemon first answers; never when undefined. */
  answersAfterPolls?: number;
  /** An earlier release's plain unit runs the agent's service, with no socket, until it is stopped. */
  plainUnitRunning?: boolean;
  /** The agent exits at every start and systemd waits to restart it (a crash loop). */
  crashLoops?: boolean;
}

/**
 * A host under a temporary root: systemctl records its calls, the clock
 * moves only in sleep, and the daemon answers once started (if at all).
 */
async function fakeHost(options: FakeHostOptions = {}) {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'start-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = hostPathsUnder(tmp);
  const executable = path.join(tmp, 'download/aks-flex-node');
  await mkdir(path.dirname(executable), { recursive: true });
  await writeFile(executable, releaseScript, { mode: 0o755 });
  const calls: string[] = [];
  let clock = 0;
  let started = options.answering === true && options.plainUnitRunning !== true;
  let plainUnitRunning = options.plainUnitRunning === true;
  let answering = options.answering === true;
  let polls = 0;
  const record = (call: string) => {
    calls.push(call);
    return Promise.resolve();
  };
  const systemctl: Systemctl = {
    daemonReload: () => record('daemon-reload'),
    enable: (names) => record(`enable ${names.join(' ')}`),
    start: (names) => {
      // As systemd: a socket whose service is already active refuses to start.
      if (plainUnitRunning)
        return Promise.reject(new Error('Socket service already active, refusing'));
      started = true;
      return record(`start ${names.join(' ')}`);
    },
    stop: (names) => {
      plainUnitRunning = false;
      answering = false;
      return record(`stop ${names.join(' ')}`);
    },
    resetFailed: (unit) => record(`reset-failed ${unit}`),
    restartNoBlock: (unit) => record(`restart --no-block ${unit}`),
    restart: (unit) => record(`restart ${unit}`),
    stopIfLoaded: (units) => record(`stop ${units.join(' ')}`),
    stopNoBlock: (units) => record(`stop --no-block ${units.join(' ')}`),
    disable: (units) => record(`disable ${units.join(' ')}`),
    disableNow: (unit) => record(`disable --now ${unit}`),
    listJobs: () => Promise.resolve(''),
    cancelJob: (id) => record(`cancel ${id}`),
    show: () => Promise.resolve(''),
    isActive: (unit) => Promise.resolve(started || (plainUnitRunning && unit === unitNames.agent)),
    unitState: () =>
      Promise.resolve(
        options.crashLoops === true
          ? { loadState: 'loaded', activeState: 'activating', subState: 'auto-restart' }
          : { loadState: 'loaded', activeState: 'active', subState: 'running' },
      ),
    mainPid: () => Promise.resolve(4242),
  };
  const deps: StartDeps = {
    paths,
    log,
    host: {
      systemctl,
      runningExecutable: () => Promise.resolve(executable),
      now: () => clock,
      sleep: (ms) => {
        clock += ms;
        return Promise.resolve();
      },
    },
    status: () => {
      if (answering) return Promise.resolve(daemonStatus(paths));
      if (!started) return Promise.reject(unreachable());
      polls += 1;
      const after = options.answersAfterPolls;
      if (after === undefined || polls <= after) return Promise.reject(unreachable());
      return Promise.resolve(daemonStatus(paths));
    },
    answerTimeoutMs: 5_000,
    lastAgentError: () => Promise.resolve('error: the agent fell over'),
  };
  return { paths, deps, calls, executable, elapsed: () => clock };
}

const absent = (file: string) =>
  stat(file).then(
    () => false,
    () => true,
  );

describe('startAgent', () => {
  it('a fresh host: the default config 0600, the running binary installed, units written before the socket and agent are enabled and started, then it waits for the answer', async () => {
    const { paths, deps, calls, executable, elapsed } = await fakeHost({ answersAfterPolls: 2 });

    const outcome = await startAgent(undefined, deps);

    expect(outcome).toEqual({
      status: daemonStatus(paths),
      sentence: 'the agent is installed and running',
    });
    expect(calls).toEqual(['daemon-reload', `enable ${units}`, `start ${units}`]);
    expect(JSON.parse(await readFile(paths.configFile, 'utf8'))).toEqual(defaultAgentConfig);
    expect((await stat(paths.configFile)).mode & 0o777).toBe(0o600);
    const layout = agentBinaryPathsUnder(paths.root);
    expect(await readFile(layout.current, 'utf8')).toBe(await readFile(executable, 'utf8'));
    expect(await readlink(layout.current)).toBe(layout.blue);
    expect(await readFile(path.join(paths.unitDir, unitNames.agent), 'utf8')).toContain(
      layout.current,
    );
    // Two polls unanswered, 500 ms apart on the host's clock, then the answer.
    expect(elapsed()).toBe(1_000);
  });

  it('a host where the daemon answers: reported as it is, nothing written and no unit touched', async () => {
    const { paths, deps, calls } = await fakeHost({ answering: true });
    const outcome = await startAgent(undefined, deps);
    expect(outcome).toEqual({
      status: daemonStatus(paths),
      sentence: 'the agent is already running; nothing to do',
    });
    expect(calls).toEqual([]);
    expect(await absent(paths.configFile)).toBe(true);
    expect(await absent(paths.root)).toBe(true);
  });

  it("an earlier release's plain unit runs the service without its socket: stopped after the install, right before socket and service start", async () => {
    const { deps, calls } = await fakeHost({ plainUnitRunning: true, answersAfterPolls: 0 });
    const outcome = await startAgent(undefined, deps);
    expect(outcome.sentence).toBe('the agent is installed and running');
    expect(calls).toEqual([
      'daemon-reload',
      `enable ${units}`,
      `stop ${unitNames.agent}`,
      `start ${units}`,
    ]);
  });

  it('this build answering under a plain unit without its socket: stopped first, then installed and started under the socket', async () => {
    const { paths, deps, calls } = await fakeHost({
      answering: true,
      plainUnitRunning: true,
      answersAfterPolls: 0,
    });
    const outcome = await startAgent(undefined, deps);
    expect(outcome.sentence).toBe('the agent is installed and running');
    expect(calls).toEqual([
      `stop ${unitNames.agent}`,
      'daemon-reload',
      `enable ${units}`,
      `start ${units}`,
    ]);
    expect(await absent(paths.root)).toBe(false);
  });

  it('a bad --config is refused even when the daemon answers, and nothing is written', async () => {
    const { paths, deps, calls } = await fakeHost({ answering: true });
    const config = path.join(paths.prefix, 'bad-config.json');
    await writeFile(config, '{ "agent": ');
    await expect(startAgent(config, deps)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect(calls).toEqual([]);
    expect(await absent(paths.configFile)).toBe(true);
  });

  it('a missing --config is refused with a hint to fix the path, not to run start again; nothing is written', async () => {
    const { paths, deps, calls } = await fakeHost();
    const missing = path.join(paths.prefix, 'missing.json');
    const error = await startAgent(missing, deps).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'INVALID_CONFIG',
      message: `read ${missing}: no such file`,
      hint: `check the path given to --config, or leave --config out to keep ${paths.configFile} (a default one is written when there is none)`,
    });
    expect(calls).toEqual([]);
    expect(await absent(paths.root)).toBe(true);
  });

  it('a --config with a misspelled key: a warning names it and the closest known key, and the file is installed with it', async () => {
    const { paths, deps } = await fakeHost({ answersAfterPolls: 0 });
    const lines: string[] = [];
    const recorded = createLogger({ destination: { write: (line: string) => lines.push(line) } });
    const config = path.join(paths.prefix, 'config.json');
    const bytes = `${JSON.stringify({ agent: { logLevl: 'debug' }, azure: { subscriptonId: 'x' } })}\n`;
    await writeFile(config, bytes);
    await startAgent(config, { ...deps, log: recorded });
    const warnings = lines
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level === 40)
      .map((line) => line.msg);
    expect(warnings).toEqual([
      `${config}: agent.logLevl is not a key this release or the Go releases read (did you mean agent.logLevel?); it is kept in the file but has no effect`,
      `${config}: azure.subscriptonId is not a key this release or the Go releases read (did you mean azure.subscriptionId?); it is kept in the file but has no effect`,
    ]);
    expect(await readFile(paths.configFile, 'utf8')).toBe(bytes);
  });

  it('issue24#7 start --config NEW while the agent runs: NEW is installed and the agent restarted to read it; the same bytes again change nothing', async () => {
    const { paths, deps, calls } = await fakeHost({ answering: true });
    await mkdir(path.dirname(paths.configFile), { recursive: true });
    await writeFile(paths.configFile, '{"agent":{"logLevel":"info"}}\n');
    const config = path.join(paths.prefix, 'new-config.json');
    const bytes = '{"agent":{"logLevel":"debug"}}\n';
    await writeFile(config, bytes);

    const outcome = await startAgent(config, deps);
    expect(outcome.sentence).toBe(`the agent is running with the config from ${config}`);
    expect(calls).toEqual([`restart ${unitNames.agent}`]);
    expect(await readFile(paths.configFile, 'utf8')).toBe(bytes);

    const again = await startAgent(config, deps);
    expect(again.sentence).toBe('the agent is already running; nothing to do');
    expect(calls).toEqual([`restart ${unitNames.agent}`]);
  });

  it('a given --config is installed 0600 byte for byte', async () => {
    const { paths, deps } = await fakeHost({ answersAfterPolls: 0 });
    const config = path.join(paths.prefix, 'config.json');
    const bytes = `${JSON.stringify({ agent: { logLevel: 'debug' } }, null, 2)}\n`;
    await writeFile(config, bytes);
    await startAgent(config, deps);
    expect(await readFile(paths.configFile, 'utf8')).toBe(bytes);
    expect((await stat(paths.configFile)).mode & 0o777).toBe(0o600);
  });

  it('an agent that never answers fails DAEMON_UNREACHABLE naming the socket, once the timeout passed on the host clock', async () => {
    const { paths, deps, calls, elapsed } = await fakeHost();
    await expect(startAgent(undefined, deps)).rejects.toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      path: paths.socket,
      message: expect.stringContaining('within 5s') as unknown,
    });
    expect(calls).toEqual(['daemon-reload', `enable ${units}`, `start ${units}`]);
    expect(elapsed()).toBeGreaterThan(5_000);
    expect(elapsed()).toBeLessThanOrEqual(5_500);
  });

  it('another holder of the activation lock refuses the start before the config or the root is written', async () => {
    const { paths, deps, calls } = await fakeHost({ answersAfterPolls: 0 });
    await mkdir(path.dirname(paths.activationLock), { recursive: true });
    const held = await acquireActivationLock({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'an offline reset',
    });
    onTestFinished(() => held.release());
    await expect(startAgent(undefined, deps)).rejects.toMatchObject({
      code: 'ACTIVATION_IN_PROGRESS',
    });
    expect(calls).toEqual([]);
    expect(await absent(paths.configFile)).toBe(true);
    expect(await absent(paths.root)).toBe(true);
  });

  it('issue24#7 a crash-looping agent with a broken installed config: INVALID_CONFIG naming the file and the field, before anything changes, not after the timeout', async () => {
    const { paths, deps, calls, elapsed } = await fakeHost({ crashLoops: true });
    await mkdir(path.dirname(paths.configFile), { recursive: true });
    await writeFile(paths.configFile, '{"agent":{"logLevel":42}}\n');
    const error = await startAgent(undefined, deps).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'INVALID_CONFIG',
      path: paths.configFile,
      message: expect.stringMatching(/the agent exits at start.*logLevel/s) as unknown,
      hint: expect.stringContaining(`systemctl restart ${unitNames.agent}`) as unknown,
    });
    expect(calls).toEqual([]);
    expect(elapsed()).toBe(0);
  });

  it('issue24#7 a crash-looping agent with a valid config: DAEMON_UNREACHABLE with the unit state and its last error, at the first poll', async () => {
    const { deps, elapsed } = await fakeHost({ crashLoops: true });
    const error = await startAgent(undefined, deps).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: expect.stringContaining(
        `${unitNames.agent} is restarting after a failure, so nothing answers on`,
      ) as unknown,
    });
    expect((error as Error).message).toContain('its last error: error: the agent fell over');
    expect(elapsed()).toBe(0);
  });
});
