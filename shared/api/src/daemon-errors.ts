import { AgentError, errnoCode, messageOf } from '@aks-flex-node/log';
import type { Problem } from './problem.js';

/**
 * The errors a client raises when the daemon does not answer or answers with
 * an error (client.ts). No zod: the status and hook bundles load this module.
 */

/** What an operator runs when the daemon does not answer as it should. */
export const daemonHint =
  'check the daemon with `systemctl status aks-flex-node-agent` and its log with `journalctl -u aks-flex-node-agent`';

/** Why a request to the daemon's socket got no answer, as an operator reads it. */
export function unreachableReason(cause: unknown): string {
  const code = errnoCode(cause);
  return code === 'ENOENT'
    ? 'the socket does not exist'
    : code === 'ECONNREFUSED'
      ? 'nothing listens on it'
      : messageOf(cause);
}

/**
 * DAEMON_UNREACHABLE for a request to `socketPath` that got no answer; NOT_ROOT
 * when the socket refused this user (it is root's, 0600): the daemon may be
 * fine, and the operator's next step is sudo, not systemctl.
 */
export function daemonUnreachable(socketPath: string, cause: unknown): AgentError {
  const code = errnoCode(cause);
  if ((code === 'EACCES' || code === 'EPERM') && process.geteuid?.() !== 0) {
    return new AgentError(
      'NOT_ROOT',
      `the daemon's socket ${socketPath} is root's alone, and this command does not run as root`,
      { path: socketPath, hint: 'run the command again with sudo', cause },
    );
  }
  return new AgentError(
    'DAEMON_UNREACHABLE',
    `the daemon did not answer on ${socketPath}: ${unreachableReason(cause)}`,
    {
      path: socketPath,
      hint: daemonHint,
      cause,
    },
  );
}

/** DAEMON_ERROR for an error status whose body is not a problem this release knows. */
export function daemonErrorStatus(method: string, url: string, status: number): AgentError {
  return new AgentError(
    'DAEMON_ERROR',
    `the daemon answered ${method} ${url} with status ${status}`,
    {
      path: url,
      hint: daemonHint,
    },
  );
}

/** DAEMON_ERROR for an answer whose body does not parse as JSON. */
export function daemonAnswerNotJson(url: string, contentType: string, cause: unknown): AgentError {
  return new AgentError(
    'DAEMON_ERROR',
    `the daemon's answer to ${url} is not JSON (${contentType})`,
    {
      path: url,
      cause,
      hint: daemonHint,
    },
  );
}

/** The {@link AgentError} a client raises for a problem body the daemon sent. */
export function errorFromProblem(problem: Problem): AgentError {
  const details: { path?: string; hint?: string } = {};
  if (problem.path !== undefined) details.path = problem.path;
  if (problem.hint !== undefined) details.hint = problem.hint;
  return new AgentError(problem.code, problem.detail, details);
}
