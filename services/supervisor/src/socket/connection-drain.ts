import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** What {@link watchConnections} keeps of a server's connections. */
interface Watch {
  /** Connections accepted that have not begun a request yet. */
  readonly fresh: Set<Socket>;
  /** Requests each connection has begun and not yet been answered. */
  readonly unanswered: WeakMap<Socket, number>;
  /** Set once the server stops accepting. */
  closing: boolean;
  /** Wakes a {@link stopAccepting} waiting for the fresh connections. */
  changed: () => void;
}

const watched = new WeakMap<Server, Watch>();

/**
 * Follows the server's connections from before it listens, so a shutdown
 * can answer every connection it accepted (see {@link stopAccepting}).
 */
export function watchConnections(server: Server): void {
  const watch: Watch = {
    fresh: new Set(),
    unanswered: new WeakMap(),
    closing: false,
    changed: () => undefined,
  };
  const forget = (socket: Socket) => {
    if (watch.fresh.delete(socket)) watch.changed();
  };
  watched.set(server, watch);
  server.on('connection', (socket: Socket) => {
    watch.fresh.add(socket);
    socket.once('close', () => {
      forget(socket);
    });
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    forget(socket);
    watch.unanswered.set(socket, (watch.unanswered.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (watch.unanswered.get(socket) ?? 1) - 1;
      watch.unanswered.set(socket, left);
      // A request that began before the close was answered keep-alive; ended
      // now (after what was written is flushed), its idle connection cannot
      // hold the shutdown to its grace.
      if (watch.closing && left === 0) socket.end();
    });
  });
}

/**
 * Stops accepting connections, leaving open the ones accepted, and resolves
 * once each of those has begun its request or closed. http.Server's own
 * close is not used for this: it destroys every connection whose request is
 * not parsed yet, and one accepted a moment before the close has its
 * request still unread in the kernel, so its client would be cut off
 * unanswered instead of waiting in the socket unit for the next daemon.
 * Closing the listening descriptor leaves systemd's copy of a passed
 * socket open (and unlinks nothing), so systemd keeps queueing for the next
 * daemon. A client that connects and never sends holds this until the
 * caller's grace cuts its connection.
 */
export async function stopAccepting(server: Server): Promise<void> {
  if (server.listening) NetServer.prototype.close.call(server);
  const watch = watched.get(server);
  if (watch === undefined) return;
  watch.closing = true;
  while (watch.fresh.size > 0) {
    await new Promise<void>((resolve) => (watch.changed = resolve));
  }
}

/**
 * What http.Server's own close adds once {@link stopAccepting} has closed
 * the listener: kept-alive connections that are idle are closed at once, and
 * it resolves once every connection has closed. Fastify's close does this
 * only for a server it listened on itself; the daemon's listens through
 * listen.ts (a socket systemd passes, or one it binds under its umask), and
 * without this an idle keep-alive client held the old daemon's exit by half
 * a second during an upgrade.
 */
export function closeConnections(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // The listener is closed already, so the callback gets ERR_SERVER_NOT_RUNNING,
    // once the last connection has closed: that wait is the point.
    server.close(() => {
      resolve();
    });
  });
}
