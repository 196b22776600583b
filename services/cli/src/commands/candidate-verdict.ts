/**
 * When the upgrade guard gives up on a switched candidate, from what it sees
 * at each look: how long since it started watching, whether the candidate
 * has answered on the socket, and how much CPU the candidate has used.
 *
 * A wall-clock deadline alone cannot tell a candidate that hangs from a
 * healthy one starved of CPU: on a loaded node (a boot, machines starting,
 * a CI host running four systemd containers on two cores) a healthy start
 * can take longer than the 5 s that a hung one is given. The candidate's CPU
 * use tells them apart: a candidate asleep or stopped before its socket uses
 * none, one spinning uses a core, and one that is only slow uses a little,
 * steadily. Only the last one is waited for, and only up to a hard limit.
 * The same holds after it answers: past its deadline to judge itself, a
 * candidate still judging on a starved host uses a little CPU, steadily, and
 * is waited for; one that uses none, or more than a judgement takes, is not.
 */

/** The limits of one watch; the guard uses {@link candidateLimits}. */
export interface CandidateLimits {
  /**
   * How long a candidate has to answer before its CPU use is asked why not.
   * A healthy daemon answers 0.5-0.7 s after its exec, 1.9 s at most on the
   * loaded 2-core bench VM (docs/performance.md); with the rollback and
   * last-good's start (about 0.9 s), one that hangs is replaced about 6.5 s
   * after the switch (issue 26's goal is 8 s).
   */
  readonly serveMs: number;
  /** No CPU used over this long, with no answer: it is not starting, it waits or is stopped. */
  readonly idleWindowMs: number;
  /** CPU a start may use before it answers; a healthy one uses 0.3-1 s (docs/performance.md). */
  readonly startCpuNs: bigint;
  /** The latest a candidate that keeps starting may answer. */
  readonly unservedLimitMs: number;
  /** How long the candidate has to judge itself healthy, from the start of the watch. */
  readonly judgeMs: number;
  /**
   * How long a candidate that answered late still has to judge itself: the
   * daemon's 3 s stability interval, and margin for a loaded host.
   */
  readonly judgeAfterServeMs: number;
  /**
   * CPU a candidate past its deadline to judge itself may have used since it
   * answered and still be waited for. After the answer a daemon sleeps out
   * its stability interval and then judges (a few files, the machine copy):
   * well under a second of CPU; more is a daemon busy with something else.
   */
  readonly judgeCpuNs: bigint;
  /** The latest a candidate that answered and keeps judging may judge itself. */
  readonly unjudgedLimitMs: number;
}

export const candidateLimits: CandidateLimits = {
  serveMs: 5_000,
  idleWindowMs: 2_000,
  startCpuNs: 3_000_000_000n,
  unservedLimitMs: 30_000,
  judgeMs: 10_000,
  judgeAfterServeMs: 6_000,
  judgeCpuNs: 2_000_000_000n,
  unjudgedLimitMs: 40_000,
};

/** One look at the candidate. */
export interface CandidateLook {
  /** Since the guard started watching. */
  readonly elapsedMs: number;
  /** It has answered on the socket, at this look or an earlier one. */
  readonly served: boolean;
  /** The CPU the candidate has used (the agent unit's, or its process tree's); undefined when unknown. */
  readonly cpuNs: bigint | undefined;
}

/** Why the candidate is rolled back at a look, or undefined to look again. */
export type CandidateVerdict = (look: CandidateLook) => string | undefined;

/**
 * A verdict for one watch: it remembers when the candidate last used CPU and
 * when the candidate first answered, so each look is judged on the history.
 */
export function watchVerdict(
  socketPath: string,
  limits: CandidateLimits = candidateLimits,
): CandidateVerdict {
  let lastCpuNs: bigint | undefined;
  let busyAtMs = 0;
  let servedAtMs: number | undefined;
  // The CPU it had used when it first answered, as last known then.
  let servedCpuNs: bigint | undefined;
  /** The verdict once it has answered: it has until judgeBy, and longer only while it judges. */
  const judgeVerdict = (look: CandidateLook, answeredAtMs: number): string | undefined => {
    const judgeBy = Math.max(limits.judgeMs, answeredAtMs + limits.judgeAfterServeMs);
    if (look.elapsedMs < judgeBy) return undefined;
    const unjudged = `the upgraded daemon did not report itself healthy within ${seconds(judgeBy)} of its start`;
    // Without CPU accounting nothing tells a slow judgement from a stuck one: the deadline decides.
    if (look.cpuNs === undefined || servedCpuNs === undefined) return unjudged;
    if (look.elapsedMs - busyAtMs >= limits.idleWindowMs) {
      return `${unjudged}, and used no CPU in the last ${seconds(limits.idleWindowMs)} (it waits or is stopped)`;
    }
    const sinceAnswer = look.cpuNs - servedCpuNs;
    if (sinceAnswer >= limits.judgeCpuNs) {
      return `${unjudged}, and has used ${seconds(Number(sinceAnswer / 1_000_000n))} of CPU since it answered, more than a judgement takes`;
    }
    const limit = Math.max(judgeBy, limits.unjudgedLimitMs);
    if (look.elapsedMs >= limit) {
      return `the upgraded daemon was still judging itself, without a verdict, ${seconds(limit)} after its start`;
    }
    return undefined;
  };
  return (look) => {
    if (look.served && servedAtMs === undefined) {
      servedAtMs = look.elapsedMs;
      servedCpuNs = look.cpuNs ?? lastCpuNs;
    }
    if (look.cpuNs !== undefined) {
      if (lastCpuNs !== undefined && look.cpuNs > lastCpuNs) busyAtMs = look.elapsedMs;
      lastCpuNs = look.cpuNs;
    }
    if (servedAtMs !== undefined) return judgeVerdict(look, servedAtMs);
    if (look.elapsedMs < limits.serveMs) return undefined;
    const unanswered = `the upgraded daemon did not answer on ${socketPath} within ${seconds(limits.serveMs)} of its start`;
    // Without CPU accounting nothing tells a slow start from a hung one: the deadline decides, as it did before.
    if (look.cpuNs === undefined) return unanswered;
    if (look.elapsedMs - busyAtMs >= limits.idleWindowMs) {
      return `${unanswered}, and used no CPU in the last ${seconds(limits.idleWindowMs)} (it waits or is stopped)`;
    }
    if (look.cpuNs >= limits.startCpuNs) {
      return `${unanswered}, and has used ${seconds(Number(look.cpuNs / 1_000_000n))} of CPU, more than a start takes`;
    }
    if (look.elapsedMs >= limits.unservedLimitMs) {
      return `the upgraded daemon was still starting, without an answer on ${socketPath}, ${seconds(limits.unservedLimitMs)} after its start`;
    }
    return undefined;
  };
}

/** Parses `systemctl show -p CPUUsageNSec`: undefined when systemd does not account it. */
export function parseCpuUsage(shown: string): bigint | undefined {
  const value = /^CPUUsageNSec=(\d+)$/m.exec(shown)?.[1];
  return value === undefined ? undefined : BigInt(value);
}

/** Clock ticks per second in /proc, USER_HZ: 100 on every Linux the agent runs on. */
const ticksPerSecond = 100n;

/** A process and the CPU it has used, from /proc/PID/stat. */
export interface ProcessCpu {
  readonly pid: number;
  readonly ppid: number;
  readonly cpuNs: bigint;
}

/**
 * Parses /proc/PID/stat: the pid, the parent, and the CPU of the process and
 * of the children it has waited for (utime, stime, cutime, cstime), in ns.
 * The fields are counted after the command name's closing parenthesis, as
 * the name may hold spaces and parentheses.
 */
export function parseProcessStat(stat: string): ProcessCpu | undefined {
  const pid = Number(/^(\d+) \(/.exec(stat)?.[1]);
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, ppid field 4, utime..cstime fields 14-17.
  const ppid = Number(fields[1]);
  const ticks = fields.slice(11, 15);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || ticks.length < 4) return undefined;
  if (ticks.some((value) => !/^\d+$/.test(value))) return undefined;
  const total = ticks.reduce((sum, value) => sum + BigInt(value), 0n);
  return { pid, ppid, cpuNs: (total * 1_000_000_000n) / ticksPerSecond };
}

/**
 * The CPU of `root` and every process below it: a starting daemon may wait
 * on a child (systemctl, a copy), which works while the daemon itself uses
 * none. Undefined when `root` is not among the processes.
 */
export function processTreeCpu(processes: readonly ProcessCpu[], root: number): bigint | undefined {
  if (!processes.some((process) => process.pid === root)) return undefined;
  const children = new Map<number, ProcessCpu[]>();
  for (const process of processes) {
    const siblings = children.get(process.ppid);
    if (siblings === undefined) children.set(process.ppid, [process]);
    else siblings.push(process);
  }
  let total = 0n;
  const pending = processes.filter((process) => process.pid === root);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    total += next.cpuNs;
    pending.push(...(children.get(next.pid) ?? []));
  }
  return total;
}

export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}
