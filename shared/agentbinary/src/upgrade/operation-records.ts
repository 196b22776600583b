import { readdir, readFile, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { operationSchema, type Operation } from '@aks-flex-node/api';
import { makeIoError, removeOwned, syncDirectory, writeFileAtomic } from '@aks-flex-node/fs';
import { AgentError, isNotFound } from '@aks-flex-node/log';

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

/** What a set-aside record's name adds to `<id>.json`: `.corrupt-<UTC time>`. */
const setAsideInfix = '.corrupt-';

/**
 * Reads an operation's record; undefined when there is none. A record that
 * is not an operation (empty, torn, not JSON, another shape) is set aside as
 * `<id>.json.corrupt-<UTC time>`, kept for a person to read, and refused with
 * NOT_FOUND saying so: left in place it would answer the same 500 forever,
 * and its result is lost either way. An id whose record was set aside earlier
 * is refused the same way. Throws NOT_FOUND so, HOST_ROOT_IO when the record
 * cannot be read or set aside.
 */
export async function readOperationRecord(dir: string, id: string): Promise<Operation | undefined> {
  if (!isValidOperationId(id)) return undefined;
  const file = path.join(dir, `${id}.json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (!isNotFound(error)) throw makeIoError('read', file, error);
    const earlier = await setAsideCopies(dir, id);
    if (earlier.length === 0) return undefined;
    throw setAsideRefusal(id, path.join(dir, earlier.sort().at(-1) ?? ''), 'earlier');
  }
  let reason: string;
  try {
    return operationSchema.parse(JSON.parse(text));
  } catch (error) {
    reason = error instanceof SyntaxError ? 'not JSON' : 'not an operation';
  }
  const aside = `${file}${setAsideInfix}${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}`;
  try {
    await rename(file, aside);
    await syncDirectory(dir);
  } catch (error) {
    // Another reader set it aside first: its name is the one to give.
    if (isNotFound(error)) return readOperationRecord(dir, id);
    throw makeIoError('set aside', file, error, { object: `as ${aside}` });
  }
  throw setAsideRefusal(id, aside, reason);
}

/** The records {@link listOperationRecords} found, and why any could not be read. */
export interface OperationRecords {
  /** Newest first, by when each finished (or started). */
  records: Operation[];
  /** A record that could not be read or was corrupt (and is now set aside), by its error. */
  unreadable: AgentError[];
}

/**
 * Reads every operation record, through {@link readOperationRecord} (the one
 * reader), newest first. A directory that does not exist holds none. A record
 * that cannot be read is reported in `unreadable`, not dropped in silence.
 * Throws HOST_ROOT_IO when the directory cannot be listed.
 */
export async function listOperationRecords(dir: string): Promise<OperationRecords> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isNotFound(error)) return { records: [], unreadable: [] };
    throw makeIoError('list', dir, error);
  }
  const records: Operation[] = [];
  const unreadable: AgentError[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const record = await readOperationRecord(dir, name.slice(0, -'.json'.length));
      if (record !== undefined) records.push(record);
    } catch (error) {
      unreadable.push(
        error instanceof AgentError ? error : makeIoError('read', path.join(dir, name), error),
      );
    }
  }
  const when = (record: Operation) => record.finishedAt ?? record.startedAt;
  records.sort((a, b) => when(b).localeCompare(when(a)));
  return { records, unreadable };
}

async function setAsideCopies(dir: string, id: string): Promise<string[]> {
  const prefix = `${id}.json${setAsideInfix}`;
  const names = await readdir(dir).catch(() => []);
  return names.filter((name) => name.startsWith(prefix));
}

function setAsideRefusal(id: string, aside: string, reason: string): AgentError {
  const why = reason === 'earlier' ? 'was corrupt' : `was corrupt (${reason})`;
  return new AgentError(
    'NOT_FOUND',
    `the record of operation ${id} ${why} and is set aside as ${aside}; its result is lost`,
    {
      path: aside,
      hint: 'see `aks-flex-node status` for the agent as it is now, and start the operation again if it is not as wanted',
    },
  );
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
