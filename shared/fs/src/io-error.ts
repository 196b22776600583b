import { AgentError, messageOf, type ErrorCode } from '@aks-flex-node/log';

/** Optional parts of an {@link makeIoError} message. */
export interface IoErrorOptions {
  /** Words after the path, before the cause (`to <target>` in "link <path> to <target>"). */
  object?: string;
  /** The operator's next step. */
  hint?: string;
  /** A more precise code than `HOST_ROOT_IO`. */
  code?: ErrorCode;
}

/**
 * Builds the "verb <path>: <cause>" error every primitive here throws. The path
 * is kept as a field and the system error as `cause`, so a caller can still
 * ask for its errno (`errnoCode(err.cause)`) after the message is composed.
 */
export function makeIoError(
  verb: string,
  path: string,
  cause: unknown,
  options: IoErrorOptions = {},
): AgentError {
  const subject = options.object === undefined ? path : `${path} ${options.object}`;
  const details =
    options.hint === undefined ? { path, cause } : { path, cause, hint: options.hint };
  return new AgentError(
    options.code ?? 'HOST_ROOT_IO',
    `${verb} ${subject}: ${messageOf(cause)}`,
    details,
  );
}
