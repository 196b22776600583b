/**
 * On-disk names relative to a root (the host root or the legacy root). The
 * earlier Go releases wrote exactly these names, and they must keep finding
 * them after a rollback, so none of them may change.
 */

/** The executable's name, as operators and earlier releases call it. */
export const binaryName = 'aks-flex-node';

/** The plain binary. Install scripts seed it on fresh hosts too, so it is not a marker. */
export const binaryFile = 'bin/aks-flex-node';

/** Holds the blue/green slots, their links and the recovery script. */
export const managedBinaryDir = 'lib/aks-flex-node';

export const blueSlotFile = 'lib/aks-flex-node/aks-flex-node-blue';
export const greenSlotFile = 'lib/aks-flex-node/aks-flex-node-green';
/** Link to the slot the agent unit runs. */
export const currentLinkFile = 'lib/aks-flex-node/aks-flex-node-current';
/** Link to the slot that last ran healthily; rollback restores it. */
export const lastGoodLinkFile = 'lib/aks-flex-node/aks-flex-node-last-good';
/** The recovery unit's script. Not a marker: an older reset can leave it behind. */
export const recoveryScriptFile = 'lib/aks-flex-node/aks-flex-node-recovery.sh';
/** The nspawn hooks' helper, installed from the running binary before hooks name it. */
export const nspawnLifecycleFile = 'bin/unbounded-agent-nspawn-lifecycle';
/**
 * The nspawn machines the agent provisions, as the Go releases name them. No
 * hook is written or run for any other name.
 */
export const nspawnMachines = ['kube1', 'kube2'] as const;
/** One of {@link nspawnMachines}. */
export type NspawnMachine = (typeof nspawnMachines)[number];
/** The machines' DNS network helper, installed by the agent library. */
export const localDnsNetworkFile = 'libexec/unbounded-localdns-network';

/**
 * The blue/green layout that every release since blue/green existed creates.
 * Only these mean "an agent is installed under this root": the plain binary,
 * the installer scripts and helpers also appear on fresh hosts or after an
 * older reset, and counting them would link a fresh host to the legacy root.
 */
export function hostRootMarkers(): string[] {
  return [blueSlotFile, greenSlotFile, currentLinkFile, lastGoodLinkFile];
}

/**
 * Every file the agent installs under a root, in the order the move copies
 * them: the plain binary, the markers, then the helpers.
 */
export function hostLayoutFiles(): string[] {
  return [
    binaryFile,
    ...hostRootMarkers(),
    recoveryScriptFile,
    nspawnLifecycleFile,
    localDnsNetworkFile,
  ];
}

/** Directories that hold only layout files and may go once empty. `bin`, `libexec` are shared. */
export function agentOnlyDirs(): string[] {
  return [managedBinaryDir];
}

/** Directories a fresh installation creates under the root (0755). */
export function hostRootSubdirs(): string[] {
  return ['bin', managedBinaryDir, 'libexec'];
}

/** The staging directory's suffix, beside the root. */
export const stagingSuffix = '.staging';

/** Present inside the root while a move from the legacy root is unfinished. */
export const movingMarkerName = '.moving';
