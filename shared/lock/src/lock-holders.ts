import { readdir, readFile, stat } from 'node:fs/promises';

/** A process that holds a lock file open, as a refusal names it. */
export interface LockHolder {
  pid: number;
  uid: number;
  /** The user's name from /etc/passwd, or the uid as text when it has none. */
  user: string;
  /**
   * The command line (`/proc/<pid>/cmdline`, the program's base name and its
   * arguments, shortened), or `comm` when it has none. Not `comm` first: a
   * Node.js process names its main thread "MainThread", which tells an
   * operator nothing about which command to stop.
   */
  command: string;
}

const procDir = '/proc';

/**
 * The processes that hold `lockFile`'s flock now, found by the file's device
 * and inode in `/proc/locks`. The pid there is the process that called
 * flock(2), which need not be the holder any longer: a shell's `flock 9`
 * helper, or this product's own (see flock.ts), exits and leaves the lock
 * with the process that keeps the file open. So a pid is believed only while
 * it still has the file open; otherwise every process with the file open is
 * named. Empty when nobody holds it, or when the lock went between the
 * refusal and this look. Never throws: a refusal is worth more than its detail.
 */
export async function findLockHolders(lockFile: string): Promise<LockHolder[]> {
  try {
    const file = await stat(lockFile, { bigint: true });
    const locks = await readFile(`${procDir}/locks`, 'utf8');
    const placers = placersOf(locks, file.dev, file.ino);
    if (placers.length === 0) return [];
    const opens = (pid: number) => hasFileOpen(pid, file.dev, file.ino);
    let pids: number[] = [];
    for (const pid of placers) if (await opens(pid)) pids.push(pid);
    if (pids.length === 0) pids = await processesWithFileOpen(file.dev, file.ino);
    const users = await userNames('/etc/passwd');
    const holders: LockHolder[] = [];
    for (const pid of pids) {
      const holder = await describeProcess(pid, users);
      if (holder !== undefined) holders.push(holder);
    }
    return holders;
  } catch {
    // Best effort by design (see above): the caller still refuses, naming the path.
    return [];
  }
}

/** "pid 12 (flock /run/x.lock sleep 600, user nobody)" for each holder, or a sentence saying none was found. */
export function describeLockHolders(holders: readonly LockHolder[]): string {
  if (holders.length === 0) return 'a process this look could not name (see `lslocks`)';
  return holders
    .map((holder) => `pid ${holder.pid} (${holder.command}, user ${holder.user})`)
    .join(', ');
}

/** The pids /proc/locks gives for granted locks on the file (waiters, shown with `->`, are not holders). */
function placersOf(locks: string, dev: bigint, ino: bigint): number[] {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn & 0xffffffffn);
  const pids: number[] = [];
  for (const line of locks.split('\n')) {
    const match =
      /^\d+:\s+(->\s+)?\S+\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (match === null || match[1] !== undefined) continue;
    const [, , pid, lockMajor, lockMinor, lockIno] = match;
    if (
      BigInt(`0x${lockMajor ?? ''}`) === major &&
      BigInt(`0x${lockMinor ?? ''}`) === minor &&
      BigInt(lockIno ?? '-1') === ino &&
      Number(pid) > 0
    ) {
      pids.push(Number(pid));
    }
  }
  return [...new Set(pids)];
}

async function hasFileOpen(pid: number, dev: bigint, ino: bigint) {
  const fdDir = `${procDir}/${String(pid)}/fd`;
  const fds = await readdir(fdDir).catch(() => []);
  for (const fd of fds) {
    const info = await stat(`${fdDir}/${fd}`, { bigint: true }).catch(() => undefined);
    if (info?.dev === dev && info.ino === ino) return true;
  }
  return false;
}

async function processesWithFileOpen(dev: bigint, ino: bigint) {
  const pids: number[] = [];
  for (const name of await readdir(procDir)) {
    if (!/^\d+$/.test(name)) continue;
    if (await hasFileOpen(Number(name), dev, ino)) pids.push(Number(name));
  }
  return pids;
}

async function describeProcess(
  pid: number,
  users: ReadonlyMap<number, string>,
): Promise<LockHolder | undefined> {
  try {
    const status = await readFile(`${procDir}/${String(pid)}/status`, 'utf8');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
    const command = await commandOf(pid);
    return { pid, uid, user: users.get(uid) ?? String(uid), command };
  } catch {
    // It ended since it was found: it holds nothing any more.
    return undefined;
  }
}

/** How a refusal names a process: its command line, else its comm. */
async function commandOf(pid: number): Promise<string> {
  const argv = (await readFile(`${procDir}/${String(pid)}/cmdline`, 'utf8'))
    .split('\0')
    .filter((arg) => arg !== '');
  const [program, ...args] = argv;
  if (program === undefined) {
    return (await readFile(`${procDir}/${String(pid)}/comm`, 'utf8')).trim();
  }
  const line = [program.slice(program.lastIndexOf('/') + 1), ...args].join(' ');
  return line.length > maxCommandLength ? `${line.slice(0, maxCommandLength - 1)}…` : line;
}

/** Long enough for `aks-flex-node agent --config /etc/aks-flex-node/config.json`. */
const maxCommandLength = 80;

async function userNames(passwdFile: string): Promise<Map<number, string>> {
  const users = new Map<number, string>();
  const text = await readFile(passwdFile, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name !== undefined && uid !== undefined && /^\d+$/.test(uid)) users.set(Number(uid), name);
  }
  return users;
}
