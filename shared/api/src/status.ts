import { z } from 'zod';
import { hostRootResponseSchema } from './host-root.js';
import { operationSchema } from './upgrade.js';
import { versionInfoSchema } from './version.js';

/**
 * How the startup gate's reason begins while the daemon starts: the one shut
 * gate a client may wait out. What follows the colon says what the start is
 * doing now (staying up, judging the AgentUpgrade it names, setting a
 * corrupt signal aside, retrying), so `status` never claims work there is none of.
 */
export const daemonStartingReason = 'the daemon is starting';

/**
 * A nspawn machine's copy of the agent that differs from `current` because
 * the daemon could not write it: the upgrade or rollback finished without it,
 * and the daemon retries with a growing wait until `repair` is done.
 */
export const machineCopyStatusSchema = z.strictObject({
  machine: z.string(),
  path: z.string(),
  /** What failed, with its cause. */
  error: z.string(),
  /** The one command (or step) that lets the daemon write it again. */
  repair: z.string(),
  failedAt: z.string(),
});
export type MachineCopyStatus = z.infer<typeof machineCopyStatusSchema>;

/** `GET /v1/status`: what the running daemon is and where its files are. */
export const statusResponseSchema = z.strictObject({
  daemon: z.strictObject({
    pid: z.number().int(),
    /** Seconds since the daemon started serving. */
    uptimeSeconds: z.number(),
    /** The executable the daemon runs from, resolved. */
    executable: z.string(),
    /** How the socket was obtained: passed by systemd, or bound by the daemon. */
    socket: z.enum(['systemd', 'self-bound']),
    socketPath: z.string(),
  }),
  version: versionInfoSchema,
  hostRoot: hostRootResponseSchema,
  /** Whether an activation (upgrade, move, reset) holds the lock right now. */
  activationInProgress: z.boolean(),
  /**
   * The startup gate: `shut` while the daemon starts, moves its files or
   * waits to be replaced (changes are refused with DAEMON_NOT_READY), with
   * the reason; when `open`, `reason` says why the host was not moved. `move`
   * is what the host-root move did at this start. `problems` lists what this
   * start could not do that the daemon runs without (a helper it could not
   * refresh); the next start retries each.
   */
  startup: z.strictObject({
    gate: z.enum(['open', 'shut']),
    reason: z.string().optional(),
    move: z.string().optional(),
    problems: z.array(z.string()).optional(),
  }),
  /** Present only while a machine's copy of the agent could not be kept equal to `current`. */
  machineCopy: machineCopyStatusSchema.optional(),
  /**
   * The operation that runs now (an AgentUpgrade or a reset: id, kind, phase,
   * progress), and the last one that finished, with its result; each absent
   * when there is none. `operations ID` shows any record.
   */
  operations: z
    .strictObject({ running: operationSchema.optional(), last: operationSchema.optional() })
    .optional(),
});
export type StatusResponse = z.infer<typeof statusResponseSchema>;
