import { readFileSync } from 'node:fs';

/** A process pinned by pid and start time, so that a recycled pid is never mistaken for it. */
export interface ProcessIdentity {
  readonly pid: number;
  /** Clock ticks since boot (field 22 of /proc/PID/stat). */
  readonly startTime: string;
}

interface ProcessStat {
  readonly state: string;
  readonly startTime: string;
}

function readProcessStat(pid: number): ProcessStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses, so count
  // fields from the last ')' on: field 3 is then index 0.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, startTime] = [fields[0], fields[19]];
  return state === undefined || startTime === undefined ? undefined : { state, startTime };
}

/** Pins a running process, or throws when it already exited. */
export function identifyProcess(pid: number): ProcessIdentity {
  const stat = readProcessStat(pid);
  if (stat === undefined) throw new Error(`read /proc/${String(pid)}/stat: process is gone`);
  return { pid, startTime: stat.startTime };
}

/**
 * True while the pinned process still runs. A zombie counts as gone: our own
 * child stays one until the event loop reaps it, which never happens while a
 * synchronous teardown waits for it.
 */
export function isRunning(target: ProcessIdentity): boolean {
  const stat = readProcessStat(target.pid);
  return stat !== undefined && stat.startTime === target.startTime && !/^[ZX]/.test(stat.state);
}
