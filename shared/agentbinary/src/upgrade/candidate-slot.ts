import type { AgentBinaryPaths } from '../agent-binary-paths.js';

/**
 * The slot the next upgrade writes: always the one `current` does not
 * resolve to, so the running binary is never overwritten in place.
 */
export function candidateSlotFor(paths: AgentBinaryPaths, resolvedCurrent: string): string {
  return resolvedCurrent === paths.blue ? paths.green : paths.blue;
}

/** Whether a path is exactly one of the two slots (look-alike names do not count). */
export function isSlot(paths: AgentBinaryPaths, candidate: string | undefined): boolean {
  return candidate === paths.blue || candidate === paths.green;
}
