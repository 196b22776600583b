import type { ErrorCode } from './error-codes.js';

/** What an {@link AgentError} carries besides its message. */
export interface AgentErrorDetails {
  /** The path or value the error is about. */
  path?: string;
  /** The operator's next step, as a command or a sentence. */
  hint?: string;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The project's one error class: a stable code, the path or value concerned,
 * a hint with the next step, and the cause. Messages state what failed and
 * name the path; the hint says what to run.
 */
export class AgentError extends Error {
  override readonly name = 'AgentError';
  readonly code: ErrorCode;
  readonly path: string | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, details: AgentErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.path = details.path;
    this.hint = details.hint;
  }
}

/** Whether a value is an {@link AgentError}, optionally with a given code. */
export function isAgentError(value: unknown, code?: ErrorCode): value is AgentError {
  return value instanceof AgentError && (code === undefined || value.code === code);
}

/** The errno code (`ENOENT`, `EROFS`, …) of a Node system error, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = error.code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * Whether an error means "no such file or directory" and nothing else. Go's
 * `ErrNotExist` is ENOENT only; ENOTDIR (a file where a directory should be)
 * is a real error, so a host with a file in the way is never taken as fresh.
 */
export function isNotFound(error: unknown): boolean {
  const code = errnoCode(error) ?? errnoCode(error instanceof AgentError ? error.cause : undefined);
  return code === 'ENOENT';
}

/** The message of any thrown value, for composing "verb path: cause" messages. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
