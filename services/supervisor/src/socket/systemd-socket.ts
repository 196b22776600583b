import { fstatSync } from 'node:fs';

/** The first descriptor systemd passes (sd_listen_fds(3)). */
const firstPassedFd = 3;

/**
 * Takes the listening socket systemd passed, if any, per sd_listen_fds(3):
 * only when LISTEN_PID names this process, and only a socket. The LISTEN_*
 * variables are removed so the programs this daemon runs do not think the
 * descriptor is theirs. Returns the descriptor, or undefined when none was passed.
 */
export function takeSystemdSocket(
  env: NodeJS.ProcessEnv = process.env,
  pid = process.pid,
): number | undefined {
  const listenPid = env.LISTEN_PID;
  const listenFds = env.LISTEN_FDS;
  delete env.LISTEN_PID;
  delete env.LISTEN_FDS;
  delete env.LISTEN_FDNAMES;
  if (listenPid === undefined || listenFds === undefined) return undefined;
  if (Number(listenPid) !== pid || Number(listenFds) < 1) return undefined;
  // A descriptor that is not a socket would make the listen call fail obscurely later.
  if (!fstatSync(firstPassedFd).isSocket()) {
    throw new Error(
      `descriptor ${firstPassedFd} passed by systemd is not a socket; check ListenStream= in aks-flex-node-agent.socket`,
    );
  }
  return firstPassedFd;
}
