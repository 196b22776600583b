import type { Host } from './host.js';
import { runOrThrow } from './run-or-throw.js';

/**
 * Bash functions, run inside a host, that look for an inspector: the
 * product's API is a Unix socket, so any TCP socket in LISTEN that one of its
 * processes owns is one the inspector opened (127.0.0.1:9229 after SIGUSR1,
 * any port --inspect names). Read from /proc, so the host needs no `ss`.
 *
 * - `tcp_listeners PID`: the local address (hex, as /proc/net/tcp spells it)
 *   of each such socket, one a line.
 * - `watch_listeners PID`: the same, polled for 2 s, stopping at the first
 *   found: the inspector opens on a thread of its own shortly after the
 *   signal, so a single look right after it could come too early.
 */
export const inspectorProbeFunctions = String.raw`
tcp_listeners() {
  local pid=$1 inodes
  inodes=$(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n')
  [ -n "$inodes" ] || return 0
  # Column 4 is the state (0A: LISTEN), 10 the socket's inode.
  awk -v inodes="$inodes" '
    BEGIN { n = split(inodes, list, "\n"); for (i = 1; i <= n; i++) owned[list[i]] = 1 }
    FNR > 1 && $4 == "0A" && ($10 in owned) { print $2 }
  ' "/proc/$pid/net/tcp" "/proc/$pid/net/tcp6"
}
watch_listeners() {
  local pid=$1 found
  for _ in $(seq 20); do
    found=$(tcp_listeners "$pid")
    if [ -n "$found" ]; then echo "$found"; return 0; fi
    sleep 0.1
  done
}
`;

/** The local addresses of TCP sockets in LISTEN that `pid` owns, watched for 2 s; empty when none appeared. */
export async function watchTcpListeners(host: Host, pid: number): Promise<string[]> {
  const result = await runOrThrow(host, [
    '/bin/bash',
    '-c',
    `${inspectorProbeFunctions}\nwatch_listeners "$1"`,
    'watch-listeners',
    String(pid),
  ]);
  return result.stdout.split('\n').filter((line) => line !== '');
}
