import { createLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ignoredSignals, ignoreSignals } from './ignored-signals.js';

/** Sends `signal` to this process and resolves once its listeners have run. */
function raise(signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    process.once(signal, () => {
      resolve();
    });
    process.kill(process.pid, signal);
  });
}

/** Removes the listeners the test added, so the next test starts from none of ours. */
function restoreListenersAfterTest() {
  const before = new Map(ignoredSignals.map((name) => [name, process.listeners(name)]));
  onTestFinished(() => {
    for (const [name, listeners] of before) {
      for (const listener of process.listeners(name)) {
        if (!listeners.includes(listener)) process.removeListener(name, listener);
      }
    }
  });
}

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    destination: {
      write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
    },
  });
  return { log, lines };
}

describe('ignoreSignals', () => {
  it('SIGHUP and SIGUSR2 are each logged at info, and taken without a stop', async () => {
    restoreListenersAfterTest();
    const { log, lines } = capturingLogger();
    ignoreSignals().logTo(log);

    await raise('SIGHUP');
    await raise('SIGUSR2');

    expect(lines.map(({ level, signal, msg }) => ({ level, signal, msg }))).toEqual(
      ['SIGHUP', 'SIGUSR2'].map((signal) => ({
        level: 30,
        signal,
        msg: 'ignored a signal: the daemon reloads nothing and goes on serving',
      })),
    );
  });

  it('a signal received before the logger exists is logged once it is given', async () => {
    restoreListenersAfterTest();
    const { log, lines } = capturingLogger();
    const ignored = ignoreSignals();

    await raise('SIGHUP');
    expect(lines).toEqual([]);
    ignored.logTo(log);

    expect(lines).toMatchObject([{ level: 30, signal: 'SIGHUP' }]);
  });
});
