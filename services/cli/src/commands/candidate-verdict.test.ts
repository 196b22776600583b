import { describe, expect, it } from 'vitest';
import {
  candidateLimits,
  parseCpuUsage,
  parseProcessStat,
  processTreeCpu,
  watchVerdict,
} from './candidate-verdict.js';

const socket = '/run/aks-flex-node/agent.sock';
const ms = 1_000_000n;

interface Candidate {
  /** CPU the agent unit has used by this time, undefined when not accounted. */
  cpuAt(elapsedMs: number): bigint | undefined;
  /** When it first answers on the socket, if ever. */
  servesAtMs?: number;
}

/** Looks every 250 ms, as the guard does; the first reason and when it came. */
function watch(
  candidate: Candidate,
  untilMs = 60_000,
): { atMs: number; reason: string } | undefined {
  const verdict = watchVerdict(socket);
  for (let elapsedMs = 0; elapsedMs <= untilMs; elapsedMs += 250) {
    const served = candidate.servesAtMs !== undefined && elapsedMs >= candidate.servesAtMs;
    const reason = verdict({ elapsedMs, served, cpuNs: candidate.cpuAt(elapsedMs) });
    if (reason !== undefined) return { atMs: elapsedMs, reason };
  }
  return undefined;
}

/** Uses CPU at `share` of a core while it runs (a starved start has a small share). */
const busy =
  (share: number) =>
  (elapsedMs: number): bigint =>
    BigInt(Math.round(elapsedMs * share)) * ms;

describe('the upgrade guard verdict on a candidate', () => {
  it('a candidate that sleeps or is stopped before its socket is rolled back at 5 s', () => {
    // exec'd, used 40 ms starting, then nothing (`sleep infinity`, SIGSTOP): at 5 s its last CPU use is over 2 s ago.
    const ended = watch({ cpuAt: (t) => (t < 250 ? 0n : 40n * ms) });
    expect(ended?.atMs).toBe(candidateLimits.serveMs);
    expect(ended?.reason).toBe(
      `the upgraded daemon did not answer on ${socket} within 5s of its start, and used no CPU in the last 2s (it waits or is stopped)`,
    );
  });

  it('a healthy start starved of CPU is waited for past 5 s, and then has time to judge itself', () => {
    // A tenth of a core: 0.6 s of CPU to answer takes 6 s of wall time; the
    // judgement comes 3 s after the answer, at 9.5 s.
    const starved = { cpuAt: busy(0.1), servesAtMs: 6_000 };
    expect(watch(starved, 9_500)).toBeUndefined();
    // Answering at 8 s, it may judge until 14 s, past the 10 s of a prompt one;
    // one that then sleeps (a stuck judgement) is rolled back there.
    const late = watch({ cpuAt: (t) => busy(0.1)(Math.min(t, 8_500)), servesAtMs: 8_000 });
    expect(late).toEqual({
      atMs: 14_000,
      reason:
        'the upgraded daemon did not report itself healthy within 14s of its start, and used no CPU in the last 2s (it waits or is stopped)',
    });
  });

  it('one that answered late and is still judging on a starved host is waited for past its deadline, while it uses little CPU', () => {
    // Answering at 9 s with a tenth of a core (the CI host of bf64ff9, where
    // a healthy candidate was rolled back at 15 s): at 15 s it has used 0.6 s
    // since the answer, and judges itself at 17 s.
    const judging = { cpuAt: busy(0.1), servesAtMs: 9_000 };
    expect(watch(judging, 17_000)).toBeUndefined();
    // Never judging, it is rolled back once it has used more CPU since the
    // answer than a judgement takes: 2 s at a tenth of a core, at 29 s.
    expect(watch(judging)).toEqual({
      atMs: 29_000,
      reason:
        'the upgraded daemon did not report itself healthy within 15s of its start, and has used 2s of CPU since it answered, more than a judgement takes',
    });
    // With a twentieth of a core, the hard limit comes first.
    expect(watch({ cpuAt: busy(0.05), servesAtMs: 9_000 })).toEqual({
      atMs: candidateLimits.unjudgedLimitMs,
      reason:
        'the upgraded daemon was still judging itself, without a verdict, 40s after its start',
    });
  });

  it('one that answers at once and never judges itself is rolled back at the judgement deadline, 10 s', () => {
    // Busy with something other than a judgement: half a core since 750 ms.
    expect(watch({ cpuAt: busy(0.5), servesAtMs: 750 })).toEqual({
      atMs: 10_000,
      reason:
        'the upgraded daemon did not report itself healthy within 10s of its start, and has used 4.6s of CPU since it answered, more than a judgement takes',
    });
    // Answering and then idle (a stand-in that serves status and does nothing else).
    expect(watch({ cpuAt: (t) => busy(0.5)(Math.min(t, 1_000)), servesAtMs: 750 })).toEqual({
      atMs: 10_000,
      reason:
        'the upgraded daemon did not report itself healthy within 10s of its start, and used no CPU in the last 2s (it waits or is stopped)',
    });
  });

  it('one that spins without answering is rolled back once it has used more CPU than a start takes', () => {
    const ended = watch({ cpuAt: busy(1) });
    // 3 s of CPU at a whole core: past 5 s, so the serve deadline ends it.
    expect(ended?.atMs).toBe(candidateLimits.serveMs);
    expect(ended?.reason).toMatch(
      /within 5s of its start, and has used 5s of CPU, more than a start takes$/,
    );
    const halfCore = watch({ cpuAt: busy(0.5) });
    expect(halfCore?.atMs).toBe(6_000);
  });

  it('one that keeps starting and never answers is rolled back at the hard limit, 30 s', () => {
    expect(watch({ cpuAt: busy(0.05) })).toEqual({
      atMs: candidateLimits.unservedLimitMs,
      reason: `the upgraded daemon was still starting, without an answer on ${socket}, 30s after its start`,
    });
  });

  it('without CPU accounting, the 5 s deadline decides, as before, and so does the deadline to judge', () => {
    expect(watch({ cpuAt: () => undefined })?.atMs).toBe(candidateLimits.serveMs);
    expect(watch({ cpuAt: () => undefined, servesAtMs: 750 })).toEqual({
      atMs: candidateLimits.judgeMs,
      reason: 'the upgraded daemon did not report itself healthy within 10s of its start',
    });
  });
});

describe('parseCpuUsage', () => {
  it('reads systemctl show, and says nothing when systemd does not account the unit', () => {
    expect(parseCpuUsage('CPUUsageNSec=812345678\n')).toBe(812_345_678n);
    expect(parseCpuUsage('CPUUsageNSec=[not set]\n')).toBeUndefined();
    expect(parseCpuUsage('')).toBeUndefined();
  });
});

describe('the CPU of a process tree, from /proc', () => {
  it('reads pid, parent and utime + stime + cutime + cstime, after a command name with spaces and parentheses', () => {
    const stat =
      '674 (aks-flex (node)) S 1 674 674 0 -1 4194560 9001 0 12 0 150 25 7 3 20 0 11 0 174350 1100000000 30000';
    // 150 + 25 + 7 + 3 ticks at 100 a second.
    expect(parseProcessStat(stat)).toEqual({ pid: 674, ppid: 1, cpuNs: 1_850_000_000n });
  });

  it('says nothing for a line it cannot read', () => {
    expect(parseProcessStat('')).toBeUndefined();
    expect(parseProcessStat('674 (x) S 1 2')).toBeUndefined();
  });

  it('adds the children and their children, not the rest of the host', () => {
    const processes = [
      { pid: 1, ppid: 0, cpuNs: 5_000n },
      { pid: 674, ppid: 1, cpuNs: 100n },
      { pid: 700, ppid: 674, cpuNs: 20n },
      { pid: 701, ppid: 700, cpuNs: 3n },
      { pid: 702, ppid: 1, cpuNs: 4_000n },
    ];
    expect(processTreeCpu(processes, 674)).toBe(123n);
    expect(processTreeCpu(processes, 999)).toBeUndefined();
  });
});
