import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { CommandResult } from './run-process.js';
import { runProcess } from './run-process.js';

/** How a command runs inside a machine. */
export interface RunOptions {
  /** Bytes for the command's stdin. */
  readonly input?: string | Uint8Array;
  /** Killed after this long; exit code 124 then, as coreutils `timeout` reports it. Default 60 s. */
  readonly timeoutMs?: number;
  /** Variables added to the clean environment the command gets. */
  readonly env?: Readonly<Record<string, string>>;
}

/** A command given as a string runs under `bash -c`; an array runs as is. */
export type MachineCommand = string | readonly string[];

/**
 * The environment of a root shell on the host. The harness's own variables
 * (vitest's, CI's, the developer's) must not leak in: the product reads
 * some of them, and a scenario should see what an operator's shell sees.
 */
const baseEnv: Readonly<Record<string, string>> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/root',
  LANG: 'C.UTF-8',
  TERM: 'dumb',
  SYSTEMD_PAGER: '',
  SYSTEMD_COLORS: '0',
};

/**
 * Runs a command in a booted machine through nsenter into its init's
 * namespaces, with a clean environment. The deadline is enforced inside
 * the machine by coreutils `timeout`, because killing nsenter from outside
 * would leave its child running in there.
 */
export function runInMachine(
  leaderPid: number,
  command: MachineCommand,
  options: RunOptions = {},
): Promise<CommandResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return runProcess(
    machineArgv(leaderPid, command, options),
    // The host-side deadline is only a backstop for a machine that stopped
    // answering altogether.
    {
      ...(options.input === undefined ? {} : { input: options.input }),
      timeoutMs: timeoutMs + 15_000,
    },
  );
}

/**
 * Starts a command in a booted machine as {@link runInMachine} does, but
 * hands back the process with its stdin open, for a scenario that types
 * into it while it runs (a terminal session). The caller ends stdin.
 */
export function spawnInMachine(
  leaderPid: number,
  command: MachineCommand,
  options: Omit<RunOptions, 'input'> = {},
): ChildProcessWithoutNullStreams {
  const [program = 'nsenter', ...args] = machineArgv(leaderPid, command, options);
  return spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
}

/** nsenter into the machine's init, a clean environment, and coreutils `timeout` inside. */
function machineArgv(
  leaderPid: number,
  command: MachineCommand,
  options: Omit<RunOptions, 'input'>,
): string[] {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const env = Object.entries({ ...baseEnv, ...options.env }).map(([k, v]) => `${k}=${v}`);
  const argv = typeof command === 'string' ? ['/bin/bash', '-c', command] : command;
  const seconds = String(Math.max(1, Math.ceil(timeoutMs / 1000)));
  return [
    'nsenter',
    `--target=${String(leaderPid)}`,
    '--all',
    '--',
    '/usr/bin/env',
    '-i',
    ...env,
    '/usr/bin/timeout',
    '--kill-after=5',
    seconds,
    ...argv,
  ];
}

/** Renders a command for messages. */
export function describeCommand(command: MachineCommand): string {
  return typeof command === 'string' ? command : command.join(' ');
}
