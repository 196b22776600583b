import { readFile } from 'node:fs/promises';
import { formatCommandResult } from './run-process.js';
import type { Host } from './host.js';

/**
 * Writes bytes to a path in the host, creating parent directories. The
 * bytes travel through stdin into a shell inside the machine rather than
 * being written through the overlay from outside: that way the host's own
 * mounts apply (a read-only /usr refuses, as it would for an operator) and
 * an absolute symlink inside the host cannot redirect the write onto this
 * machine. Temp file and rename, so a reader never sees half a binary.
 */
export async function writeHostFile(
  host: Host,
  destination: string,
  content: string | Uint8Array,
  mode = 0o644,
): Promise<void> {
  const script =
    'set -e; mkdir -p "$(dirname "$1")"; tmp="$(mktemp "$1.XXXXXX")"; ' +
    'cat >"$tmp"; chmod "$2" "$tmp"; mv -f "$tmp" "$1"';
  const argv = ['/bin/bash', '-c', script, 'write-host-file', destination, mode.toString(8)];
  const result = await host.run(argv, { input: content, timeoutMs: 300_000 });
  if (result.exitCode !== 0) {
    throw new Error(
      `write ${destination} on ${host.name}\n${formatCommandResult(argv.join(' '), result)}`,
    );
  }
}

/** Copies a file of this machine into the host (the built executable, a fixture binary). */
export async function copyIn(
  host: Host,
  source: string,
  destination: string,
  mode = 0o755,
): Promise<void> {
  await writeHostFile(host, destination, await readFile(source), mode);
}
