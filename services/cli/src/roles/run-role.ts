/** A role's entry: takes the arguments after the role's name, resolves with the exit code. */
export type RunRole = (args: string[]) => Promise<number>;

/** Loads a role's modules and gives back its entry; called only for the role that runs. */
export type LoadRole = () => Promise<RunRole>;

/**
 * What every bundle in `src/bundles/` exports: runs one of its roles and
 * reports that role's errors itself, since each bundle holds its own copy of
 * AgentError and another bundle's `instanceof` would not recognise it.
 */
export interface BundleEntry {
  runBundleRole(role: string, args: string[]): Promise<number>;
}
