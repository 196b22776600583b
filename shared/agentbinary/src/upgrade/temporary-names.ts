/**
 * The names upgrades and activations give their temporary files. Only these
 * are ever swept: a slot, a link or an operator's file never matches them.
 */
export const temporaryNames = {
  /** A candidate staged beside its slot before the rename (stageAndSwitch). */
  stagedCandidatePrefix: '.aks-flex-node-candidate-',
  /** The archive library's partial member beside the slot (extractExactMember). */
  extractionTempPrefix: '.agent-upgrade-',
  /** A downloaded archive in the daemon's downloads directory (downloadArchive). */
  downloadedArchive: /^agent-upgrade-[0-9a-f]+\.tar\.gz$/,
  /** The CLI's private copy of a `--candidate` binary, a directory in the state directory. */
  activationSnapshot: /^host-agent-activation-[A-Za-z0-9]+$/,
} as const;

/** Whether a name in the slot directory is an upgrade's temporary file. */
export function isTemporarySlotName(name: string): boolean {
  return (
    name.startsWith(temporaryNames.stagedCandidatePrefix) ||
    name.startsWith(temporaryNames.extractionTempPrefix)
  );
}
