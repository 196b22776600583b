import { AgentError } from '@aks-flex-node/log';
import { daemonHint } from './daemon-errors.js';
import type { HostRootResponse, MigrateResponse } from './host-root.js';
import type { RegenerateNspawnHooksResponse } from './nspawn.js';
import type { Problem } from './problem.js';
import type { StatusResponse } from './status.js';
import type { Operation, OperationEvent, RecoveryResponse } from './upgrade.js';

/** One problem a generated validator found, as ajv reports it. */
export interface ValidationIssue {
  keyword: string;
  /** JSON Pointer to the value, `''` for the whole answer. */
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** A validator generated from a zod schema (answer-validators-source.ts); `errors` after a failure. */
export interface GeneratedValidator<T> {
  (value: unknown): value is T;
  errors?: ValidationIssue[] | null;
}

/**
 * A validator for each answer the daemon gives, generated from its zod
 * schema in this package; a route's `answer` (routes.ts) names its own.
 */
export interface AnswerValidators {
  status: GeneratedValidator<StatusResponse>;
  hostRoot: GeneratedValidator<HostRootResponse>;
  migrate: GeneratedValidator<MigrateResponse>;
  operation: GeneratedValidator<Operation>;
  operationEvent: GeneratedValidator<OperationEvent>;
  recovery: GeneratedValidator<RecoveryResponse>;
  nspawnHooks: GeneratedValidator<RegenerateNspawnHooksResponse>;
  problem: GeneratedValidator<Problem>;
}

/** The name of one answer in {@link AnswerValidators}. */
export type AnswerName = keyof AnswerValidators;

/** The type of the answer a validator accepts. */
export type AnswerOf<Name extends AnswerName> =
  AnswerValidators[Name] extends GeneratedValidator<infer T> ? T : never;

/** How many issues a message lists; the rest are counted. */
const listedIssues = 5;

/**
 * Returns `value` as a `T` when `validate` accepts it; otherwise throws
 * DAEMON_ERROR naming each path and what is wrong with it, as
 * "the daemon's answer to GET /v1/status does not match this release's schema: daemon.pid: must be integer".
 */
export function checkAnswer<T>(
  validate: GeneratedValidator<T>,
  value: unknown,
  request: string,
): T {
  if (validate(value)) return value;
  const issues = (validate.errors ?? []).map(describeIssue);
  const more = issues.length > listedIssues ? `; and ${issues.length - listedIssues} more` : '';
  throw new AgentError(
    'DAEMON_ERROR',
    `the daemon's answer to ${request} does not match this release's schema: ` +
      `${issues.slice(0, listedIssues).join('; ')}${more}`,
    {
      path: request,
      hint: `the daemon may run another release than this command: compare \`aks-flex-node version\` with the daemon's executable; ${daemonHint}`,
    },
  );
}

/** `daemon.pid: must be integer`; a missing or unknown field is named by its own path. */
export function describeIssue(issue: ValidationIssue): string {
  const at = issue.instancePath.split('/').slice(1).map(unescapePointer);
  const { additionalProperty, missingProperty, allowedValues } = issue.params;
  if (issue.keyword === 'additionalProperties' && typeof additionalProperty === 'string') {
    return `${[...at, additionalProperty].join('.')}: is not a field this release knows`;
  }
  if (issue.keyword === 'required' && typeof missingProperty === 'string') {
    return `${[...at, missingProperty].join('.')}: is missing`;
  }
  const allowed = Array.isArray(allowedValues)
    ? ` (${allowedValues.map((allowedValue) => JSON.stringify(allowedValue)).join(', ')})`
    : '';
  const path = at.length === 0 ? '(the answer)' : at.join('.');
  return `${path}: ${issue.message ?? issue.keyword}${allowed}`;
}

// JSON Pointer escapes: ~1 is '/', ~0 is '~'.
function unescapePointer(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
