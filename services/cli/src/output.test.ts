import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * Runs a script that prints 1000 lines through output.ts after its reader
 * has gone, as `aks-flex-node status | head -3` leaves it, then exits 3.
 */
async function printToClosedReader(handled: boolean) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'output-'));
  try {
    const bundle = path.join(dir, 'print.mjs');
    await build({
      stdin: {
        contents: `import { dropOutputOnceReaderCloses, printLine } from ${JSON.stringify(path.join(import.meta.dirname, 'output.ts'))};
          ${handled ? 'dropOutputOnceReaderCloses();' : ''}
          // Prints once told the reader has gone (SIGUSR2), having said on fd 3 it listens.
          const alive = setInterval(() => undefined, 60_000);
          process.on('SIGUSR2', () => {
            clearInterval(alive);
            for (let i = 0; i < 1000; i++) printLine('line ' + i);
            process.exitCode = 3;
          });
          (await import('node:fs')).writeSync(3, 'listening\\n');`,
        resolveDir: import.meta.dirname,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: bundle,
      logLevel: 'silent',
    });
    const child = spawn(process.execPath, [bundle], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    const [, out, err, ready] = child.stdio;
    if (!(out instanceof Readable && err instanceof Readable && ready instanceof Readable)) {
      throw new Error('the child has no stdout, stderr and fd 3 pipes');
    }
    let stderr = '';
    err.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await once(ready, 'data');
    // The reader goes before a line is written, as head does after its lines.
    out.destroy();
    await once(out, 'close');
    child.kill('SIGUSR2');
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stderr };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('output to a reader that stopped (issue 22 item 7)', () => {
  it('issue22#7 drops the rest quietly and ends with the command own exit code', async () => {
    expect(await printToClosedReader(true)).toEqual({ code: 3, stderr: '' });
  }, 15_000);

  it('without it, Node ends the process with an EPIPE stack trace (the defect)', async () => {
    const { code, stderr } = await printToClosedReader(false);
    expect(code).not.toBe(3);
    expect(stderr).toContain('EPIPE');
  }, 15_000);
});
