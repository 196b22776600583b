import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { problemContentType, problemFromError, requestBodyLimitText } from '@aks-flex-node/api';
import { AgentError, type ErrorCode } from '@aks-flex-node/log';

/**
 * The one error handler: every error leaves as problem+json with a stable
 * code. 4xx are the client's mistakes and are logged at info; 5xx at error.
 */
export async function handleError(
  error: FastifyError | AgentError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const agentError = error instanceof AgentError ? error : fromFastifyError(error);
  const problem = problemFromError(agentError);
  // A shut startup gate answers 503, but it is a refusal the client retries, not a failure.
  if (problem.status >= 500 && problem.code !== 'DAEMON_NOT_READY') {
    request.log.error({ err: error, code: problem.code }, 'request failed');
  } else {
    request.log.info({ code: problem.code, detail: problem.detail }, 'request refused');
  }
  return reply.status(problem.status).type(problemContentType).send(problem);
}

function fromFastifyError(error: FastifyError): AgentError {
  const status = error.statusCode ?? 500;
  if (status === 413) {
    return new AgentError('REQUEST_TOO_LARGE', `the request body is too large: ${error.message}`, {
      hint: `request bodies are limited to ${requestBodyLimitText}; send a URL rather than content`,
    });
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return new AgentError('INVALID_ARGUMENT', `the request URL is not valid: ${error.message}`, {
      hint: 'percent-encode the path correctly (see docs/api.md for the routes)',
    });
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new AgentError('INVALID_ARGUMENT', 'an id in the request URL is too long', {
      hint: 'an operation id is at most 128 characters; use the id the daemon returned',
    });
  }
  if (status === 408) {
    return new AgentError('REQUEST_TIMEOUT', 'the request did not arrive in time', {
      hint: 'send the whole request at once; the daemon does not wait for a slow client',
    });
  }
  if (status === 431) {
    return new AgentError(
      'REQUEST_HEADERS_TOO_LARGE',
      'the request headers are over the size limit',
      {
        hint: 'send the documented headers only (see docs/api.md)',
      },
    );
  }
  if (status === 404) {
    return new AgentError('NOT_FOUND', error.message, { hint: 'see docs/api.md for the routes' });
  }
  const code: ErrorCode = status < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL';
  return new AgentError(code, error.message, { cause: error });
}
