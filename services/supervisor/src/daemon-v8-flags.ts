import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags for the long-running daemon only, set at run time when the agent
 * role starts (the one-shot roles keep V8's defaults, which suit a process
 * that lives for a second). Only flags V8 reads after start-up have any
 * effect here; heap limits fixed when the isolate was made
 * (--max-semi-space-size and the like) do not, and --lite-mode is refused.
 * docs/performance.md, "Where the daemon's memory goes", has the measurements.
 */
export const daemonV8Flags: readonly string[] = [
  // The young generation otherwise doubles its semi-spaces under load, from
  // 1 MB up to 32 MB each, and keeps them: about 30 MB of the resident memory
  // 64 status clients left behind. A status request allocates about 2 KB, so a
  // 1 MB semi-space is one quick scavenge of a small live set per few hundred
  // requests.
  '--semi-space-growth-factor=1',
];

/**
 * Names the variable that replaces {@link daemonV8Flags} (space-separated,
 * empty for none): for measuring what each flag buys, not for production.
 */
export const daemonV8FlagsVariable = 'AKS_FLEX_NODE_DAEMON_V8_FLAGS';

/** Applies the daemon's V8 flags, or those the debugging variable names instead. */
export function applyDaemonV8Flags(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const override = env[daemonV8FlagsVariable];
  const flags =
    override === undefined ? daemonV8Flags : override.split(/\s+/).filter((f) => f !== '');
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
