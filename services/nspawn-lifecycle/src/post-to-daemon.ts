import { requestOverUnixSocket } from '@aks-flex-node/api';
import { errnoCode, messageOf } from '@aks-flex-node/log';

/** How the daemon answered one request, or why it did not. */
export type DaemonAnswer =
  | { kind: 'answered'; body: unknown }
  | { kind: 'refused'; status: number; code?: string; detail: string; hint?: string }
  | { kind: 'unreachable'; reason: string };

/**
 * POSTs an empty JSON object to the daemon over its Unix socket without
 * node:http (shared/api's unix-http-request.ts): the hook needs neither the typed
 * client's zod nor anything else. Never throws: every failure is an answer
 * the caller reports.
 */
export async function postToDaemon(
  socketPath: string,
  url: string,
  timeoutMs: number,
): Promise<DaemonAnswer> {
  try {
    const response = await requestOverUnixSocket({
      socketPath,
      method: 'POST',
      path: url,
      body: '{}',
      timeoutMs,
    });
    return interpret(response.status, response.body);
  } catch (error) {
    return { kind: 'unreachable', reason: describeConnectError(error) };
  }
}

function describeConnectError(error: unknown): string {
  switch (errnoCode(error)) {
    case 'ENOENT':
      return 'the socket does not exist';
    case 'ECONNREFUSED':
      return 'nothing listens on it';
    default:
      return messageOf(error);
  }
}

function interpret(status: number, text: string): DaemonAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    return { kind: 'refused', status, detail: `an answer that is not JSON (status ${status})` };
  }
  if (status >= 200 && status < 300) return { kind: 'answered', body };
  const problem =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const answer: DaemonAnswer = {
    kind: 'refused',
    status,
    detail: typeof problem.detail === 'string' ? problem.detail : `status ${status}`,
  };
  if (typeof problem.code === 'string') answer.code = problem.code;
  if (typeof problem.hint === 'string') answer.hint = problem.hint;
  return answer;
}
