import { apiRoutes, routePath } from '@aks-flex-node/api';
import type { NspawnMachine } from '@aks-flex-node/layout';
import type { HookLog } from './hook-log.js';
import { postToDaemon } from './post-to-daemon.js';

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
  const url = routePath(apiRoutes.regenerateNspawnHooks, { machine });
  const answer = await postToDaemon(options.socketPath, url, options.timeoutMs);
  const keeps = 'the machine keeps its config';
  switch (answer.kind) {
    case 'unreachable':
      log.warn(
        `not running the nspawn lifecycle phase: no daemon answered on ${options.socketPath} (${answer.reason}); ${keeps}`,
        { socket: options.socketPath },
      );
      return 0;
    case 'refused':
      log.warn(
        `not running the nspawn lifecycle phase: the daemon refused: ${answer.detail}; ${keeps}`,
        {
          status: answer.status,
          ...(answer.code === undefined ? {} : { code: answer.code }),
          ...(answer.hint === undefined ? {} : { hint: answer.hint }),
        },
      );
      return 0;
    case 'answered': {
      const result = answer.body as Record<string, unknown>;
      log.info(
        `the daemon regenerated the hooks of ${machine}: they run ${String(result.helper)}`,
        { root: result.root, changed: result.changed, reloaded: result.reloaded },
      );
      return 0;
    }
  }
}
