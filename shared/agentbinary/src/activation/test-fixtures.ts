/**
 * Named fixtures for the direct-activation tests (spec agentbinary §3.6,
 * §7 #94–#108). Layouts come from the upgrade fixtures; here are the staged
 * candidate, a fake service adapter that records its calls, and a listing of
 * the whole temp tree to prove a plan changed nothing.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { ActivationServicePlan } from '@aks-flex-node/api';
import { expect } from 'vitest';
import type { ActivationService } from './activation-service.js';
import { agentScript, type Layout } from '../upgrade/test-fixtures.js';

/** Where the operator staged the candidate: outside the layout, as §1.2 requires. */
export function candidatePathIn(l: Layout): string {
  return path.join(l.tmp, 'root/aks-flex-node-release/aks-flex-node');
}

/** Stages a candidate that reports `version`; a slot's own name makes it identical to that slot. */
export async function stageCandidate(l: Layout, version = 'v2'): Promise<string> {
  const file = candidatePathIn(l);
  await agentScript(file, version);
  return file;
}

/** A service plan for a unit that is installed, active and out of date. */
export const activeService: ActivationServicePlan = {
  installed: true,
  wasActive: true,
  updateRequired: true,
};

/** What a fake service saw, in order; `health` lists the binaries it was asked to wait for. */
export interface FakeService {
  service: ActivationService;
  calls: string[];
  health: string[];
  /** Whether each restart's signal was already aborted when it was called. */
  restartSignalsAborted: boolean[];
}

/** Behaviour of a fake service; each hook may throw to fail that step. */
export interface FakeServiceOptions {
  plan?: ActivationServicePlan;
  running?: string;
  restart?: (attempt: number) => Promise<void>;
  waitHealthy?: (expected: string, attempt: number) => Promise<void>;
}

/** A service adapter that records its calls; every step succeeds unless a hook says otherwise. */
export function fakeService(options: FakeServiceOptions = {}): FakeService {
  const calls: string[] = [];
  const health: string[] = [];
  const restartSignalsAborted: boolean[] = [];
  const service: ActivationService = {
    preflight: () => {
      calls.push('preflight');
      return Promise.resolve(options.plan ?? activeService);
    },
    runningExecutable: () => Promise.resolve(options.running),
    prepare: () => {
      calls.push('prepare');
      return Promise.resolve();
    },
    reload: () => {
      calls.push('reload');
      return Promise.resolve();
    },
    restart: async (_plan, signal) => {
      calls.push('restart');
      restartSignalsAborted.push(signal.aborted);
      await options.restart?.(restartSignalsAborted.length);
    },
    waitHealthy: async (_plan, expected) => {
      calls.push(`waitHealthy ${path.basename(expected)}`);
      health.push(expected);
      await options.waitHealthy?.(expected, health.length);
    },
  };
  return { service, calls, health, restartSignalsAborted };
}

/**
 * Every entry under `dir` with its type, mode, link text and content digest:
 * two equal listings mean nothing was created, removed or changed.
 */
export async function listTree(dir: string): Promise<string[]> {
  const lines: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const file = path.join(dir, name);
    const info = await lstat(file);
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isSymbolicLink()) lines.push(`${file} link ${await readlink(file)}`);
    else if (info.isDirectory()) lines.push(`${file} dir ${mode}`, ...(await listTree(file)));
    else {
      const digest = createHash('sha256')
        .update(await readFile(file))
        .digest('hex');
      lines.push(`${file} file ${mode} ${digest}`);
    }
  }
  return lines;
}

/** Asserts that `attempt` fails with an AgentError of `code` whose message contains `message`. */
export async function expectFailure(
  attempt: Promise<unknown>,
  code: string,
  message: string,
): Promise<void> {
  await expect(attempt).rejects.toThrow(message);
  await expect(attempt).rejects.toMatchObject({ code });
}
