import http from 'node:http';
import { errnoCode, messageOf } from '@aks-flex-node/log';

/** How the daemon answered one request, or why it did not. */
export type DaemonAnswer =
  | { kind: 'answered'; body: unknown }
  | { kind: 'refused'; status: number; code?: string; detail: string; hint?: string }
  | { kind: 'unreachable'; reason: string };

/**
 * POSTs an empty JSON object to the daemon over its Unix socket with plain
 * node:http: the hook needs neither the typed client's zod nor anything
 * else. Never throws: every failure is an answer the caller reports.
 */
export function postToDaemon(
  socketPath: string,
  url: string,
  timeoutMs: number,
): Promise<DaemonAnswer> {
  return new Promise((resolve) => {
    const request = http.request(
      {
        socketPath,
        method: 'POST',
        path: url,
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => {
          resolve({ kind: 'unreachable', reason: messageOf(error) });
        });
        response.on('end', () => {
          resolve(interpret(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
        });
      },
    );
    request.on('timeout', () => {
      request.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    request.on('error', (error) => {
      resolve({ kind: 'unreachable', reason: describeConnectError(error) });
    });
    request.end('{}');
  });
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
