import type { StatusResponse } from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { HostSnapshot } from '../host-view.js';
import { createStatusSerializer } from './status-serializer.js';

/**
 * What `GET /v1/status` answers, in one place for both ways a request reaches
 * it: fastify's route and the server's fast path (socket/status-fast-path.ts).
 * Both read the same host view and write through the same serializer, so
 * they cannot answer differently.
 */
export interface StatusAnswer {
  /** The answer now, or once the host view is refreshed when it is too old to serve. */
  readonly read: () => StatusResponse | Promise<StatusResponse>;
  /** The answer's JSON: validated against the schema, byte for byte what the route sends. */
  readonly serialize: (data: StatusResponse) => string;
  /**
   * The answer's JSON when it can be written without waiting (the host view
   * is fresh); undefined when the host view must be refreshed first.
   * Throws what {@link serialize} throws.
   */
  readonly bodyNow: () => string | undefined;
}

export function createStatusAnswer(
  deps: Pick<SupervisorDeps, 'daemon' | 'now' | 'version' | 'startup' | 'hostView'> & {
    operations: Pick<SupervisorDeps['operations'], 'running' | 'lastFinished'>;
    upgrades: Pick<SupervisorDeps['upgrades'], 'machineCopyView'>;
  },
): StatusAnswer {
  const serialize = createStatusSerializer();
  const answer = (host: HostSnapshot): StatusResponse => {
    const machineCopy = deps.upgrades.machineCopyView();
    const running = deps.operations.running();
    const last = deps.operations.lastFinished();
    const operations = {
      ...(running === undefined ? {} : { running }),
      ...(last === undefined ? {} : { last }),
    };
    return {
      daemon: {
        pid: deps.daemon.pid,
        uptimeSeconds: Math.max(0, (deps.now() - deps.daemon.startedAt) / 1000),
        executable: deps.daemon.executable,
        socket: deps.daemon.socket,
        socketPath: deps.daemon.socketPath,
      },
      version: deps.version,
      hostRoot: host.hostRoot,
      activationInProgress: host.activationInProgress,
      startup: deps.startup.view(),
      ...(machineCopy === undefined ? {} : { machineCopy }),
      ...(running === undefined && last === undefined ? {} : { operations }),
    };
  };
  return {
    read: () => {
      const host = deps.hostView.read();
      return host instanceof Promise ? host.then(answer) : answer(host);
    },
    serialize,
    bodyNow: () => {
      // Not read(): a refresh's promise chained here and dropped would be an
      // unhandled rejection if the refresh failed; fastify's route awaits it.
      const host = deps.hostView.read();
      return host instanceof Promise ? undefined : serialize(answer(host));
    },
  };
}
