import {
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Operation } from '@aks-flex-node/api';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  isValidOperationId,
  listOperationRecords,
  readOperationRecord,
  writeOperationRecord,
} from './operation-records.js';

/**
 * Records stand in for the spec's MachineOperation status write (§3.7 step 6):
 * the judging daemon finishes an operation another process began, so its
 * result must be on disk.
 */
async function newRecordsDir(): Promise<string> {
  const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-records-')));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  return path.join(tmp, 'var/lib/aks-flex-node/operations');
}

function judged(id: string, fields: Partial<Operation> = {}): Operation {
  return {
    id,
    kind: 'agent-upgrade',
    state: 'succeeded',
    phase: 'judged',
    message: 'AgentUpgrade completed',
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T01:00:00.000Z',
    ...fields,
  };
}

/** Only `<id>.json` files, each 0600 and one newline-terminated line, are ever left in the dir. */
async function assertRecordFiles(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.trimEnd()).not.toContain('\n');
    expect(isValidOperationId(name.slice(0, -'.json'.length))).toBe(true);
  }
}

describe('writeOperationRecord and readOperationRecord (spec agentbinary §3.7 step 6)', () => {
  it.each([
    ['agentbinary§3.7 a succeeded record reads back equal', judged('op-1', { toVersion: 'v2' })],
    [
      'agentbinary§3.7 a rolled-back record keeps its paths and message',
      judged('op-2', {
        state: 'rolled-back',
        message: 'the daemon started from /x, not the candidate /y',
        fromPath: '/r/lib/aks-flex-node/aks-flex-node-blue',
        toPath: '/r/lib/aks-flex-node/aks-flex-node-green',
        switchedAt: '2026-01-01T00:00:01.000Z',
      }),
    ],
    ['agentbinary§3.7 the longest id (128 characters) is a file name', judged('a'.repeat(128))],
    [
      'agentbinary§3.7 dots, dashes and underscores are allowed after the first character',
      judged('op_1.2-3'),
    ],
  ])('%s (written twice)', async (_name, operation) => {
    const dir = await newRecordsDir();
    for (let run = 1; run <= 2; run++) {
      await writeOperationRecord(dir, operation);
      expect(await readOperationRecord(dir, operation.id)).toEqual(operation);
      expect(await readdir(dir)).toEqual([`${operation.id}.json`]);
      await assertRecordFiles(dir);
    }
  });

  it('agentbinary§3.7 a later result for the same operation replaces the earlier one', async () => {
    const dir = await newRecordsDir();
    await writeOperationRecord(dir, judged('op-1', { state: 'failed', message: 'first' }));
    await writeOperationRecord(dir, judged('op-1', { state: 'rolled-back', message: 'second' }));
    expect(await readOperationRecord(dir, 'op-1')).toMatchObject({
      state: 'rolled-back',
      message: 'second',
    });
    expect(await readdir(dir)).toEqual(['op-1.json']);
  });

  it.each([
    ['an empty id', ''],
    ['.', '.'],
    ['..', '..'],
    ['a path that climbs out', '../escape'],
    ['a path with a directory', 'a/b'],
    ['a hidden name', '.hidden'],
    ['a leading dash', '-rf'],
    ['a space', 'op 1'],
    ['an id of 129 characters', 'a'.repeat(129)],
  ])('agentbinary§3.7 %s is refused as an id and never names a file', async (_name, id) => {
    const dir = await newRecordsDir();
    expect(isValidOperationId(id)).toBe(false);
    await expect(writeOperationRecord(dir, judged(id))).rejects.toThrow(
      `invalid operation id ${JSON.stringify(id)}`,
    );
    expect(await readOperationRecord(dir, id)).toBeUndefined();
    // Nothing was written, not even the directory.
    await expect(stat(path.dirname(dir))).rejects.toThrow(/ENOENT/);
  });

  it('agentbinary§3.7 an operation with no record reads as undefined', async () => {
    const dir = await newRecordsDir();
    expect(await readOperationRecord(dir, 'op-1')).toBeUndefined();
    await writeOperationRecord(dir, judged('op-1'));
    expect(await readOperationRecord(dir, 'op-2')).toBeUndefined();
  });

  it.each([
    ['empty', '', 'not JSON'],
    ['not JSON', '{"id":', 'not JSON'],
    ['not an operation', '{"id":"op-1","kind":"reboot"}', 'not an operation'],
  ])(
    'issue22#7 a record that is %s is set aside under a name saying so, and refused with NOT_FOUND, every time',
    async (_name, content, reason) => {
      const dir = await newRecordsDir();
      await writeOperationRecord(dir, judged('op-0'));
      await writeFile(path.join(dir, 'op-1.json'), content);
      const first = await readOperationRecord(dir, 'op-1').catch((error: unknown) => error);
      const aside = (await readdir(dir)).filter((name) => name !== 'op-0.json');
      expect(aside).toHaveLength(1);
      expect(aside[0]).toMatch(/^op-1\.json\.corrupt-\d{8}T\d{6}Z$/);
      const asidePath = path.join(dir, aside[0] ?? '');
      expect(await readFile(asidePath, 'utf8')).toBe(content);
      expect(first).toMatchObject({
        code: 'NOT_FOUND',
        path: asidePath,
        message: `the record of operation op-1 was corrupt (${reason}) and is set aside as ${asidePath}; its result is lost`,
      });
      // Read again (as a client polls): the same refusal, not "no such operation" or a 500.
      await expect(readOperationRecord(dir, 'op-1')).rejects.toMatchObject({
        code: 'NOT_FOUND',
        path: asidePath,
      });
      expect(await readOperationRecord(dir, 'op-0')).toEqual(judged('op-0'));
    },
  );

  it('agentbinary§3.7 the newest 20 records are kept and older ones removed; other files stay', async () => {
    const dir = await newRecordsDir();
    const base = Date.parse('2026-01-01T00:00:00.000Z') / 1000;
    for (let i = 1; i <= 20; i++) {
      await writeOperationRecord(dir, judged(`op-${i}`));
      // Distinct, increasing ages: op-1 is the oldest.
      await utimes(path.join(dir, `op-${i}.json`), base + i, base + i);
    }
    await writeFile(path.join(dir, 'notes.txt'), 'kept');
    expect((await readdir(dir)).filter((name) => name.endsWith('.json'))).toHaveLength(20);

    for (let run = 1; run <= 2; run++) {
      await writeOperationRecord(dir, judged('op-21'));
      const names = await readdir(dir);
      expect(names.filter((name) => name.endsWith('.json'))).toHaveLength(20);
      expect(names).not.toContain('op-1.json');
      expect(names).toContain('op-2.json');
      expect(names).toContain('op-21.json');
      expect(names).toContain('notes.txt');
      await assertRecordFiles(dir);
    }

    await writeOperationRecord(dir, judged('op-22'));
    const names = await readdir(dir);
    expect(names).not.toContain('op-2.json');
    expect(names).toContain('op-3.json');
    expect(await readOperationRecord(dir, 'op-22')).toEqual(judged('op-22'));
  });
});

describe('listing the records for `operations` and status (issue#24.3)', () => {
  it('lists every record newest first, and reports a corrupt one instead of dropping it', async () => {
    const dir = await newRecordsDir();
    expect(await listOperationRecords(dir)).toEqual({ records: [], unreadable: [] });
    await writeOperationRecord(
      dir,
      judged('upgrade-a', { finishedAt: '2026-01-01T01:00:00.000Z' }),
    );
    await writeOperationRecord(
      dir,
      judged('upgrade-c', { finishedAt: '2026-01-03T01:00:00.000Z' }),
    );
    await writeOperationRecord(
      dir,
      judged('upgrade-b', { finishedAt: '2026-01-02T01:00:00.000Z' }),
    );
    await writeFile(path.join(dir, 'upgrade-torn.json'), '{"id":');

    const { records, unreadable } = await listOperationRecords(dir);

    expect(records.map((record) => record.id)).toEqual(['upgrade-c', 'upgrade-b', 'upgrade-a']);
    expect(unreadable).toHaveLength(1);
    expect(unreadable[0]?.message).toMatch(/upgrade-torn .*set aside/);
  });
});
