import type { Socket } from 'node:net';
import { problemContentType, problemFromError } from '@aks-flex-node/api';
import { AgentError, type Logger } from '@aks-flex-node/log';

/**
 * Answers an HTTP request Node.js refused before fastify saw it (headers
 * over the limit, a request that did not arrive in time, bytes that are not
 * HTTP) with problem+json and a stable code, as every other error, then
 * closes the connection.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket, log: Logger) {
  const agentError = describeClientError(error);
  log.info({ code: agentError.code, cause: error.code }, 'request refused before routing');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(problemFromError(agentError));
  const status = problemFromError(agentError).status;
  socket.end(
    `HTTP/1.1 ${status} ${reasonPhrases[status] ?? 'Error'}\r\n` +
      `Content-Type: ${problemContentType}; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

const reasonPhrases: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

function describeClientError(error: Error & { code?: string }): AgentError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AgentError(
        'REQUEST_HEADERS_TOO_LARGE',
        'the request headers are over the size limit',
        {
          hint: 'send the documented headers only (see docs/api.md)',
        },
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return new AgentError('REQUEST_TIMEOUT', 'the request did not arrive in time', {
        hint: 'send the whole request at once; the daemon does not wait for a slow client',
      });
    default:
      return new AgentError('INVALID_ARGUMENT', `the request is not valid HTTP: ${error.message}`, {
        hint: 'talk to the daemon with `aks-flex-node` or an HTTP client (see docs/api.md)',
      });
  }
}
