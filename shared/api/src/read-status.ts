import { checkAnswer } from './answer-validation.js';
import { answerValidators } from './answer-validators.js';
import {
  daemonAnswerNotJson,
  daemonErrorStatus,
  daemonUnreachable,
  errorFromProblem,
} from './daemon-errors.js';
import { apiRoutes, routePath } from './routes.js';
import type { StatusResponse } from './status.js';
import { requestOverUnixSocket } from './unix-http-request.js';

/** Where the daemon listens and how long it may stay silent. */
export interface ReadStatusOptions {
  socketPath: string;
  timeoutMs: number;
}

/**
 * `GET /v1/status` as createApiClient's `status()` does it, with the same
 * errors, but without node:http or zod: `aks-flex-node status` must start
 * about as fast as a bare Node.js (bench/nspawn-pre-start.sh). The answer
 * is checked by the validator generated from statusResponseSchema.
 */
export async function readDaemonStatus(options: ReadStatusOptions): Promise<StatusResponse> {
  const { method } = apiRoutes.status;
  const url = routePath(apiRoutes.status);
  let response;
  try {
    response = await requestOverUnixSocket({
      socketPath: options.socketPath,
      method,
      path: url,
      timeoutMs: options.timeoutMs,
    });
  } catch (error) {
    throw daemonUnreachable(options.socketPath, error);
  }
  let body: unknown;
  try {
    body = JSON.parse(response.body) as unknown;
  } catch (error) {
    throw daemonAnswerNotJson(url, response.contentType, error);
  }
  const validators = answerValidators();
  if (response.status >= 400) {
    if (validators.problem(body)) throw errorFromProblem(body);
    throw daemonErrorStatus(method, url, response.status);
  }
  return checkAnswer(validators.status, body, `${method} ${url}`);
}
