import { createApiClient, unreachableReason } from '@aks-flex-node/api';
import type { NspawnMachine } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import type { HookLog } from './hook-log.js';

/** What pre-start needs besides the machine. */
export interface PreStartOptions {
  socketPath: string;
  /** How long to wait for the daemon, which may be restarting (the socket unit holds the connection). */
  timeoutMs: number;
  log: HookLog;
}

/**
 * pre-start: ask the daemon to migrate the host root and rewrite this
 * machine's hooks under the resolved root, then reload systemd. The hook
 * writes nothing itself: while a daemon runs it is the only writer. When no
 * daemon answers, or it refuses (a host root that cannot be migrated, an
 * activation in progress), the machine starts with the config it has and the
 * reason is logged: a host that cannot be migrated never keeps the kubelet's
 * machine from starting (spec/daemon.md 6.3). Always exits 0.
 */
export async function runPreStart(
  machine: NspawnMachine,
  options: PreStartOptions,
): Promise<number> {
  const { log } = options;
  const client = createApiClient({ socketPath: options.socketPath, timeoutMs: options.timeoutMs });
  const keeps = 'the machine keeps its config';
  let result;
  try {
    result = await client.regenerateNspawnHooks(machine);
  } catch (error) {
    if (isAgentError(error, 'DAEMON_UNREACHABLE')) {
      log.warn(
        `not running the nspawn lifecycle phase: no daemon answered on ${options.socketPath} (${unreachableReason(error.cause)}); ${keeps}`,
        { socket: options.socketPath },
      );
      return 0;
    }
    // The daemon's refusal, or an answer outside the schema: both are the client's AgentError.
    if (!isAgentError(error)) throw error;
    log.warn(
      `not running the nspawn lifecycle phase: the daemon refused: ${error.message}; ${keeps}`,
      {
        code: error.code,
        ...(error.hint === undefined ? {} : { hint: error.hint }),
      },
    );
    return 0;
  }
  log.info(`the daemon regenerated the hooks of ${machine}: they run ${result.helper}`, {
    root: result.root,
    changed: result.changed,
    reloaded: result.reloaded,
  });
  return 0;
}
