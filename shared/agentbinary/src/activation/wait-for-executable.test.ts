import { describe, expect, it } from 'vitest';
import { fakeServiceHost, type FakeHostScript } from './fake-service-host.js';
import { waitForExecutable } from './wait-for-executable.js';

const unit = 'aks-flex-node-agent.service';
const green = '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green';
const blue = '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-blue';

interface HealthyCase {
  script: FakeHostScript;
  /** When the wait resolves on the fake clock: 3 s after the last miss. */
  resolvesAt: number;
}

const healthy: Record<string, HealthyCase> = {
  'agentbinary§3.6.3 the main process runs the expected binary from the start: healthy after 3 s': {
    script: { mainPid: () => 42, executable: () => green },
    resolvesAt: 3_000,
  },
  'agentbinary§3.6.3 the old binary until 1 s, then the expected one: 3 s from the switch': {
    script: { mainPid: () => 42, executable: (_pid, at) => (at < 1_000 ? blue : green) },
    resolvesAt: 4_000,
  },
  'agentbinary§3.6.3 a restart in between (no main process) starts the 3 s again': {
    script: {
      mainPid: (at) => (at >= 2_000 && at < 2_500 ? 0 : 42),
      executable: () => green,
    },
    resolvesAt: 5_500,
  },
};

interface UnhealthyCase {
  script: FakeHostScript;
  message: string;
}

const unhealthy: Record<string, UnhealthyCase> = {
  'agentbinary§3.6.3 the service keeps running the old binary: unhealthy after 30 s': {
    script: { mainPid: () => 42, executable: () => blue },
    message: `its main process 42 executes ${blue}, not ${green}`,
  },
  'agentbinary§3.6.3 the service never gets a main process: unhealthy after 30 s': {
    script: { mainPid: () => 0 },
    message: 'it has no main process',
  },
  'agentbinary§3.6.3 the right binary, but never for 3 s at a time: unhealthy': {
    script: {
      mainPid: (at) => (Math.floor(at / 2_000) % 2 === 0 ? 42 : 0),
      executable: () => green,
    },
    message: 'it has no main process',
  },
};

describe('waitForExecutable', () => {
  it.each(Object.entries(healthy))('%s', async (_name, row) => {
    const fake = fakeServiceHost(row.script);
    const signal = new AbortController().signal;
    await waitForExecutable({ unit, expected: green, host: fake.host, signal });
    expect(fake.elapsed()).toBe(row.resolvesAt);
  });

  it.each(Object.entries(unhealthy))('%s', async (_name, row) => {
    const fake = fakeServiceHost(row.script);
    const signal = new AbortController().signal;
    const attempt = waitForExecutable({ unit, expected: green, host: fake.host, signal });
    await expect(attempt).rejects.toThrow(row.message);
    await expect(attempt).rejects.toMatchObject({ code: 'UPGRADE_FAILED', path: green });
    expect(fake.elapsed()).toBe(30_000);
  });

  it('agentbinary#107 a cancelled caller stops the wait at the next poll', async () => {
    const fake = fakeServiceHost({ mainPid: () => 42, executable: () => blue });
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    await expect(
      waitForExecutable({ unit, expected: green, host: fake.host, signal: controller.signal }),
    ).rejects.toThrow('cancelled');
    expect(fake.elapsed()).toBe(0);
  });
});
