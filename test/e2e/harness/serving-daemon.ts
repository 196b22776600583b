import type { StatusResponse } from '@aks-flex-node/api';
import { statusResponseSchema } from '@aks-flex-node/api';
import type { Host } from './host.js';
import { productPaths } from './product-names.js';
import { formatCommandResult } from './run-process.js';
import { shellPause } from './shell-pause.js';

/** A status answer and when it arrived, in ms since the epoch by the host's clock. */
export interface StatusAnswer {
  readonly answeredAtMs: number;
  readonly status: StatusResponse;
}

/** Which daemon {@link waitForServingDaemon} waits for, and how. */
export interface WaitForServingDaemonOptions {
  /** The executable the daemon must run from (a slot path). */
  readonly executable: string;
  /**
   * The pid of a daemon that does not count: the one serving before the
   * change. Leave it out after a reboot, when every daemon is new.
   */
  readonly otherThanPid?: number;
  /** Default 60 s. */
  readonly timeoutMs?: number;
  /** Pause between status requests. Default 150 ms. */
  readonly intervalMs?: number;
}

// The time is taken as soon as status returns, before the answer is looked
// at, so it is when the daemon answered (to the poll's resolution).
// Asked with curl on the socket, not the CLI's `status --json` (which prints
// the same answer): each start of the 135 MB executable costs about 0.2 s of
// CPU, and this loop asks every 150 ms through a whole rollback, on a host
// the daemon being waited for needs (the CLI's status is tested on its own,
// in docs-run and operator-walkthrough). It also leaves the CLI's own start
// out of the time of the answer. The answer's daemon is matched with bash's
// own regex and the pause is shellPause's nap, so curl is the one fork of a
// look; the answer is checked whole by the schema once it is returned.
const pollScript = String.raw`
${shellPause}
socket=$1 executable=$2 other_pid=$3 interval=$4
daemon_field='"daemon":\{[^{}]*\}'
pid_field='"pid":([0-9]+)'
while :; do
  if { answer=$(curl -sf --max-time 5 --unix-socket "$socket" http://agent/v1/status); } 2>/dev/null; then
    now_ms
    if [[ $answer =~ $daemon_field ]]; then
      daemon=${'$'}{BASH_REMATCH[0]}
      if [[ $daemon == *"\"executable\":\"$executable\""* && $daemon =~ $pid_field && ${'$'}{BASH_REMATCH[1]} != "$other_pid" ]]; then
        printf '%s\n%s\n' "$now" "$answer"
        exit 0
      fi
    fi
  fi
  nap "$interval"
done
`;

/**
 * Asks the daemon for its status on the host every `intervalMs` until one other
 * than `otherThanPid` answers from `executable`, and reports when it first
 * did. The host shares this machine's clock, so the time compares with
 * timestamps the product records. Throws on the deadline.
 */
export async function waitForServingDaemon(
  host: Host,
  options: WaitForServingDaemonOptions,
): Promise<StatusAnswer> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const argv = [
    '/bin/bash',
    '-c',
    pollScript,
    'wait-for-serving-daemon',
    productPaths.socket,
    options.executable,
    // No daemon has pid 0, so 0 excludes none.
    String(options.otherThanPid ?? 0),
    String((options.intervalMs ?? 150) / 1000),
  ];
  const result = await host.run(argv, { timeoutMs });
  const [answeredAt = '', ...answer] = result.stdout.trim().split('\n');
  if (result.exitCode !== 0) {
    throw new Error(
      `no daemon answered status from ${options.executable} on ${host.name} within ${timeoutMs / 1000} s ` +
        `(pid ${options.otherThanPid ?? 'none'} excluded)\n${formatCommandResult(argv.slice(3).join(' '), result)}`,
    );
  }
  return {
    answeredAtMs: Number(answeredAt),
    status: statusResponseSchema.parse(JSON.parse(answer.join('\n'))),
  };
}
