import type { Server } from 'node:http';
import type { StatusResponse } from './status.js';

/** A status answer as the daemon sends it: one of each field, the optional ones included. */
export function statusAnswer(): StatusResponse {
  return {
    daemon: {
      pid: 4242,
      uptimeSeconds: 12.5,
      executable: '/opt/unbounded/agent/releases/0.1.0/aks-flex-node',
      socket: 'systemd',
      socketPath: '/run/aks-flex-node/agent.sock',
    },
    version: {
      version: '0.1.0',
      commit: '44cee805f2fa',
      arch: 'amd64',
      node: 'v24.22.3',
      capabilities: ['host-root', 'nspawn-hooks'],
    },
    hostRoot: {
      path: '/usr/local',
      resolved: '/opt/unbounded/agent',
      planned: '/usr/local',
      state: 'linked',
      legacyReleased: false,
    },
    activationInProgress: false,
    startup: { gate: 'open', reason: 'last-good predates the host root', move: 'not-ready' },
  };
}

/** Closes a test's daemon stand-in, its open connections first (an idle keep-alive would hold close). */
export async function closeTestServer(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
