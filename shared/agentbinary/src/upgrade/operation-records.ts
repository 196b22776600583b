import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { operationSchema, type Operation } from '@aks-flex-node/api';
import { makeIoError, removeOwned, writeFileAtomic } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';

/** How many finished operations are kept; older records are removed. */
const keptRecords = 20;

/** Operation ids name files, so only a safe alphabet is accepted. */
const idPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Whether a string can be an operation id (and so a file name). */
export function isValidOperationId(id: string): boolean {
  return idPattern.test(id) && id !== '.' && id !== '..';
}

/**
 * Records an operation durably. An upgrade is finished by the daemon that
 * starts after it, so its result must live on disk, not in a process.
 */
export async function writeOperationRecord(dir: string, operation: Operation): Promise<void> {
  if (!isValidOperationId(operation.id))
    throw new Error(`invalid operation id ${JSON.stringify(operation.id)}`);
  await writeFileAtomic(path.join(dir, `${operation.id}.json`), `${JSON.stringify(operation)}\n`, {
    mode: 0o600,
  });
  await pruneOperationRecords(dir);
}

/** Reads an operation's record; undefined when there is none. */
export async function readOperationRecord(dir: string, id: string): Promise<Operation | undefined> {
  if (!isValidOperationId(id)) return undefined;
  const file = path.join(dir, `${id}.json`);
  try {
    return operationSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw makeIoError('read', file, error);
  }
}

async function pruneOperationRecords(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json'));
  if (names.length <= keptRecords) return;
  const dated = await Promise.all(
    names.map(async (name) => ({ name, mtime: (await stat(path.join(dir, name))).mtimeMs })),
  );
  dated.sort((a, b) => a.mtime - b.mtime);
  for (const { name } of dated.slice(0, dated.length - keptRecords))
    await removeOwned(path.join(dir, name));
}
