import type { Host } from './host.js';
import { productPaths } from './product-names.js';
import type { CommandResult } from './run-process.js';
import { formatCommandResult } from './run-process.js';
import { runOrThrow } from './run-or-throw.js';
import { shellPause } from './shell-pause.js';

/** One `GET /v1/status` the poller sent, on a connection of its own. */
export interface PolledRequest {
  /** When curl started and when it returned, in ms since the epoch by the host's clock. */
  readonly startMs: number;
  readonly endMs: number;
  /** The HTTP status, or 0 when no answer came (refused, reset, timed out). */
  readonly code: number;
  /** The pid of the daemon that answered (`daemon.pid` in the answer), or 0. */
  readonly pid: number;
}

/** A poller running in the host; {@link StatusPoller.stop} ends it and returns what it saw. */
export interface StatusPoller {
  stop(): Promise<PolledRequest[]>;
}

const stopFile = '/run/aks-flex-node-status-poller.stop';

// One curl per request, so every request opens a new connection, as the CLI
// does: a connection made while no daemon runs waits in the socket unit's
// queue, and one the old daemon accepted must still be answered. bash's
// EPOCHREALTIME and shellPause's nap cost no fork, so the only pacing is
// curl's own start-up (a few ms) plus the pause. The daemon's pid is taken
// from the answer so a reader can tell which daemon served which request.
const pollScript = `
${shellPause}
socket=$1 pause=$2 stop=$3
rm -f "$stop"
while [[ ! -e $stop ]]; do
  start=$EPOCHREALTIME
  { answer=$(curl -sS --max-time 30 --unix-socket "$socket" -w '\\n%{http_code}' http://localhost/v1/status); } 2>/dev/null
  end=$EPOCHREALTIME
  code=\${answer##*$'\\n'}
  [[ $code =~ ^[0-9]+$ ]] || code=0
  pid=0
  [[ $answer =~ \\"daemon\\":\\{[^{}]*\\"pid\\":([0-9]+) ]] && pid=\${BASH_REMATCH[1]}
  printf '%s %s %s %s\\n' "$start" "$end" "$code" "$pid"
  [[ $pause == 0 ]] || nap "$pause"
done
`;

/**
 * Starts a client in the host that sends `GET /v1/status` to the agent's
 * socket over a new connection again and again, `pauseMs` apart (0: back to
 * back), until stopped. It runs from the host's curl, not the product's CLI,
 * so it asks whatever daemon holds the socket, candidate or last-good.
 */
export function startStatusPoller(host: Host, pauseMs = 0, maxMs = 300_000): StatusPoller {
  const argv = [
    '/bin/bash',
    '-c',
    pollScript,
    'status-poller',
    productPaths.socket,
    String(pauseMs / 1000),
    stopFile,
  ];
  const running = host.run(argv, { timeoutMs: maxMs });
  return {
    stop: async () => {
      await runOrThrow(host, ['touch', stopFile]);
      return parsePollerOutput(await running, argv.slice(3).join(' '));
    },
  };
}

function parsePollerOutput(result: CommandResult, command: string): PolledRequest[] {
  if (result.exitCode !== 0) {
    throw new Error(`the status poller failed\n${formatCommandResult(command, result)}`);
  }
  return result.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [start = '', end = '', code = '', pid = ''] = line.split(' ');
      return {
        startMs: Number(start) * 1000,
        endMs: Number(end) * 1000,
        code: Number(code),
        pid: Number(pid),
      };
    });
}

/** What a poll says about one hand-over from one daemon to the next. */
export interface HandOver {
  /** The pid of the daemon serving when the poll began. */
  readonly oldPid: number;
  /** The pid of the first other daemon that answered. */
  readonly newPid: number;
  /** The old daemon's last answer (end of its request). */
  readonly lastOldAnswerMs: number;
  /** The new daemon's first answer. */
  readonly firstNewAnswerMs: number;
  /** Requests that got no `200`: refused, reset, timed out or answered with an error. */
  readonly failed: readonly PolledRequest[];
  readonly requests: number;
  /** The longest a single request waited for its answer. */
  readonly longestWaitMs: number;
}

/**
 * Reads the hand-over out of a poll: the last answer of the daemon that
 * answered first, and the first answer of another one. Throws, with the
 * pids seen, when no other daemon answered.
 */
export function readHandOver(polled: readonly PolledRequest[]): HandOver {
  const answered = polled.filter((request) => request.code === 200 && request.pid !== 0);
  const oldPid = answered[0]?.pid;
  const firstNew = answered.find((request) => request.pid !== oldPid);
  if (oldPid === undefined || firstNew === undefined) {
    const pids = [...new Set(answered.map((request) => request.pid))].join(', ');
    throw new Error(
      `the status poll saw no hand-over: ${polled.length} requests, answered by pids [${pids}]`,
    );
  }
  const lastOld = answered.filter(
    (request) => request.pid === oldPid && request.endMs <= firstNew.endMs,
  );
  return {
    oldPid,
    newPid: firstNew.pid,
    lastOldAnswerMs: lastOld.at(-1)?.endMs ?? firstNew.endMs,
    firstNewAnswerMs: firstNew.endMs,
    failed: polled.filter((request) => request.code !== 200),
    requests: polled.length,
    longestWaitMs: Math.max(...polled.map((request) => request.endMs - request.startMs)),
  };
}
