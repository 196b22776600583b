import { z } from 'zod';
import { errorCodeSchema } from './problem.js';

/** A release archive by URL, and optionally its digest. */
export const archiveSourceSchema = z.strictObject({
  /** An http, https or file URL of a release archive, `…/<version>/aks-flex-node-linux-<amd64|arm64>.tar.gz`. */
  url: z.string().min(1).max(8192),
  /** The archive's SHA-256 in hex; enforced when given. */
  sha256: z.string().max(80).optional(),
});
export type ArchiveSource = z.infer<typeof archiveSourceSchema>;

/**
 * A binary already on the host, installed as it is: `agent-upgrade --candidate`
 * sends its private snapshot of the candidate, so what the operator named can
 * change afterwards without changing what is installed.
 */
export const binarySourceSchema = z.strictObject({
  /** An absolute, clean path to a regular executable file. */
  binaryPath: z
    .string()
    .min(1)
    .max(4096)
    .refine((value) => !value.includes('\0'), 'binaryPath must not contain a NUL byte')
    .refine((value) => value.startsWith('/'), 'binaryPath must be an absolute path'),
});
export type BinarySource = z.infer<typeof binarySourceSchema>;

/**
 * `POST /v1/agent-upgrades`: exactly one kind of source. Both objects are
 * strict, so a body naming both `url` and `binaryPath` matches neither and
 * is refused, as is any unknown field.
 */
export const agentUpgradeRequestSchema = z.strictObject({
  source: z.union([archiveSourceSchema, binarySourceSchema], {
    error:
      'source takes exactly one of url (a release archive) or binaryPath (a binary on the host)',
  }),
});
export type AgentUpgradeRequest = z.infer<typeof agentUpgradeRequestSchema>;

/**
 * Where an operation is. `restarting` spans the daemon's restart into the
 * candidate; the restarted daemon (or the rollback) ends it.
 */
export const operationStates = [
  'running',
  'restarting',
  'succeeded',
  'failed',
  'rolled-back',
] as const;
export const operationStateSchema = z.enum(operationStates);
export type OperationState = z.infer<typeof operationStateSchema>;

/** Whether an operation in this state has ended. */
export function isTerminalOperationState(state: OperationState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'rolled-back';
}

/** What an operation does: an AgentUpgrade, or a reset (`POST /v1/reset`). */
export const operationKinds = ['agent-upgrade', 'reset'] as const;
export const operationKindSchema = z.enum(operationKinds);
export type OperationKind = z.infer<typeof operationKindSchema>;

/**
 * The `{id}` of `/v1/operations/{id}`: the alphabet operation records are
 * named with, so an id that could never exist (traversal, NUL, 10 kB) is
 * refused at the door instead of looked up.
 */
export const operationParamsSchema = z.strictObject({
  id: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
      'an operation id is 1 to 128 letters, digits, dots, dashes and underscores',
    ),
});
export type OperationParams = z.infer<typeof operationParamsSchema>;

/** An operation as `GET /v1/operations/{id}` reports it. URLs in it are always redacted. */
export const operationSchema = z.strictObject({
  id: z.string(),
  kind: operationKindSchema,
  state: operationStateSchema,
  /** The step running now, or the last one. */
  phase: z.string(),
  message: z.string().optional(),
  /**
   * Why a failed operation failed: the error code, which gives the command's
   * exit code (refused, fetch failed, cancelled …), and the error's next step.
   */
  code: errorCodeSchema.optional(),
  hint: z.string().optional(),
  /** A download's progress, while it runs and after. */
  receivedBytes: z.number().int().optional(),
  totalBytes: z.number().int().optional(),
  sourceUrl: z.string().optional(),
  fromPath: z.string().optional(),
  toPath: z.string().optional(),
  toVersion: z.string().optional(),
  startedAt: z.string(),
  switchedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  /** A reset's: the paths it removed, and the node's network state (`link wg51820`, `nft table ip unbounded_localdns`). */
  removed: z.array(z.string()).optional(),
  /** A reset's: what it found but left, each with why (a `localdns` link that is no dummy, `nft` not installed). */
  left: z.array(z.string()).optional(),
  /** A reset's: the agent binary it kept for a rejoin, when one runs. */
  keptBinary: z.string().optional(),
});
export type Operation = z.infer<typeof operationSchema>;

/**
 * `aks-flex-node operations --json`: the operation the daemon runs now, when
 * one answers, and the records on disk (the last 20 finished), newest first.
 */
export const operationListSchema = z.strictObject({
  running: operationSchema.optional(),
  records: z.array(operationSchema),
});
export type OperationList = z.infer<typeof operationListSchema>;

/** One line of an operation's event stream (`GET /v1/operations/{id}/events`, NDJSON). */
export const operationEventSchema = z.strictObject({
  seq: z.number().int(),
  at: z.string(),
  phase: z.string(),
  state: operationStateSchema,
  receivedBytes: z.number().int().optional(),
  totalBytes: z.number().int().optional(),
  message: z.string().optional(),
});
export type OperationEvent = z.infer<typeof operationEventSchema>;

/**
 * `/etc/aks-flex-node/agent-upgrade-signal.json`: the durable record of an
 * upgrade in flight. Earlier releases read and write the same file, so its
 * field names are theirs, and fields this release does not know are kept.
 */
export const upgradeSignalSchema = z.looseObject({
  operationName: z.string().trim().min(1, 'operationName is empty'),
  activeMachine: z
    .string()
    .trim()
    .refine(
      (value) => value === '' || value === 'kube1' || value === 'kube2',
      'invalid active machine',
    )
    .optional(),
  candidatePath: z.string().trim().optional(),
  initiatingDaemonInstance: z.string().trim().optional(),
  switchCommitted: z.boolean().optional(),
  recoveryRequired: z.boolean().optional(),
  failure: z.string().trim().optional(),
  // This release's additions: enough for the restarted daemon to finish the operation record.
  sourceUrl: z.string().optional(),
  previousPath: z.string().optional(),
  startedAt: z.string().optional(),
  switchedAt: z.string().optional(),
  candidateVersion: z.string().optional(),
  /** Set when this signal was rebuilt from the links after a corrupt one was set aside: why, and where it went. */
  corruptSignal: z.string().optional(),
});
export type UpgradeSignal = z.infer<typeof upgradeSignalSchema>;

/** `POST /v1/recovery`: what the recovery shim asks the daemon to do. */
export const recoveryRequestSchema = z.strictObject({ message: z.string().max(4096).optional() });
export type RecoveryRequest = z.infer<typeof recoveryRequestSchema>;

/** The answer to a recovery request. */
export const recoveryResponseSchema = z.strictObject({
  recovered: z.boolean(),
  current: z.string().optional(),
  message: z.string(),
});
export type RecoveryResponse = z.infer<typeof recoveryResponseSchema>;
