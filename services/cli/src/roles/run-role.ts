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
  /**
   * `runOther` runs a role from another bundle, as the dispatcher does: the
   * token bundle hands a cache miss to token-issue with it. Passed in, not
   * imported, so no bundle imports the loader that imports every bundle.
   */
  runBundleRole(role: string, args: string[], runOther: RunOtherBundle): Promise<number>;
}

/** Runs `role` from the bundle `name` and resolves with its exit code. */
export type RunOtherBundle = (name: 'token-issue', role: string, args: string[]) => Promise<number>;
