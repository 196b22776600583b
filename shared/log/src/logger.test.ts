import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger, createLoggerCalling } from './logger.js';

/** A destination that keeps the lines written to it. */
function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const lines = () =>
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines };
}

async function tmpDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'log-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('createLogger with a log file (agent.logDir)', () => {
  it('issue24#7 writes every line at the logger level to the file too, creating its directory, as the Go releases write <logDir>/aks-flex-node.log', async () => {
    const file = path.join(await tmpDir(), 'log', 'aks-flex-node.log');
    const journal = capture();
    const log = createLogger({ level: 'debug', destination: journal.stream, alsoToFile: file });
    log.debug({ step: 1 }, 'daemon starting');
    log.info('daemon serving');
    const written = (await readFile(file, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(written.map((line) => line.msg)).toEqual(['daemon starting', 'daemon serving']);
    expect(journal.lines().map((line) => line.msg)).toEqual(['daemon starting', 'daemon serving']);
  });

  it('appends to the file an earlier start wrote', async () => {
    const file = path.join(await tmpDir(), 'aks-flex-node.log');
    await writeFile(file, '{"msg":"an earlier start"}\n');
    createLogger({ destination: capture().stream, alsoToFile: file }).info('this start');
    expect(await readFile(file, 'utf8')).toMatch(
      /^\{"msg":"an earlier start"\}\n.*"msg":"this start"/,
    );
  });

  it('a file it cannot open: the lines go to the destination alone, with a warning naming the file and why', async () => {
    const blocker = path.join(await tmpDir(), 'not-a-dir');
    await writeFile(blocker, '');
    const file = path.join(blocker, 'aks-flex-node.log');
    const journal = capture();
    createLogger({ destination: journal.stream, alsoToFile: file }).info('daemon serving');
    const [warning, line] = journal.lines();
    expect(warning).toMatchObject({
      level: 40,
      path: file,
      msg: `cannot write the log file ${file} (agent.logDir); logging to the journal only`,
    });
    expect((warning?.err as { code?: string } | undefined)?.code).toMatch(/ENOTDIR|EEXIST/);
    expect(line?.msg).toBe('daemon serving');
  });

  it('a log file replaced by a symlink is not followed: the target stays as it was, and the lines go to the destination', async () => {
    const dir = await tmpDir();
    const target = path.join(dir, 'elsewhere');
    await writeFile(target, 'untouched\n');
    const file = path.join(dir, 'aks-flex-node.log');
    await symlink(target, file);
    const journal = capture();
    createLogger({ destination: journal.stream, alsoToFile: file }).info('daemon serving');
    expect(await readFile(target, 'utf8')).toBe('untouched\n');
    const [warning, line] = journal.lines();
    expect((warning?.err as { code?: string } | undefined)?.code).toBe('ELOOP');
    expect(line?.msg).toBe('daemon serving');
  });
});

describe('createLoggerCalling', () => {
  it('calls back once, on the first line that says the words, at any level', () => {
    let calls = 0;
    const log = createLoggerCalling('the lock is busy', () => (calls += 1));
    log.info('starting');
    expect(calls).toBe(0);
    log.debug({ purpose: 'x' }, 'the lock is busy; trying again');
    log.info('the lock is busy; trying again');
    expect(calls).toBe(1);
  });
});
