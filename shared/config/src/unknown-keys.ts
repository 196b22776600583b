/**
 * The keys a config may hold at the levels an operator edits by hand (the
 * top level, `agent` and `azure`): this product's, and the Go releases'
 * (their config structs across releases and what their install scripts
 * render). A key outside these is most likely a typo (`subscriptonId`): it
 * would be ignored silently by every release. Deeper sections belong to the
 * Go releases and are not judged here.
 */
const knownKeys: Readonly<Record<string, readonly string[]>> = {
  '': [
    'agent',
    'azure',
    'bootstrap',
    'cni',
    'components',
    'containerd',
    'kubernetes',
    'labels',
    'networking',
    'node',
    'npd',
    'paths',
    'runc',
  ],
  agent: [
    'e2eMode',
    'enableDriftDetectionAndRemediation',
    'logDir',
    'logLevel',
    'machineOperationMode',
    'machineReconcileInterval',
    'nodeName',
  ],
  azure: [
    'arc',
    'bootstrapToken',
    'cloud',
    'managedIdentity',
    'resourceManagerEndpoint',
    'servicePrincipal',
    'subscriptionId',
    'targetAgentPoolName',
    'targetCluster',
    'tenantId',
  ],
};

/** A key no release knows, with the known key it most resembles. */
export interface UnknownConfigKey {
  /** Dotted, as in `azure.subscriptonId`. */
  key: string;
  /** Dotted; undefined when no known key is close. */
  closest: string | undefined;
}

/** The unknown keys of a parsed config, in file order. Keys are only reported: they stay in the file. */
export function findUnknownConfigKeys(json: unknown): UnknownConfigKey[] {
  const found: UnknownConfigKey[] = [];
  for (const [section, known] of Object.entries(knownKeys)) {
    const object = section === '' ? json : fieldOf(json, section);
    if (!isPlainObject(object)) continue;
    const prefix = section === '' ? '' : `${section}.`;
    for (const key of Object.keys(object)) {
      if (known.includes(key)) continue;
      const closest = closestKey(key, known);
      found.push({
        key: `${prefix}${key}`,
        closest: closest === undefined ? undefined : `${prefix}${closest}`,
      });
    }
  }
  return found;
}

/** One warning line for an unknown key. */
export function describeUnknownConfigKey(configPath: string, unknown: UnknownConfigKey): string {
  const guess = unknown.closest === undefined ? '' : ` (did you mean ${unknown.closest}?)`;
  return `${configPath}: ${unknown.key} is not a key this release or the Go releases read${guess}; it is kept in the file but has no effect`;
}

function fieldOf(json: unknown, key: string): unknown {
  return isPlainObject(json) ? json[key] : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The known key at the smallest edit distance, when that is at most a third of its length (and at least 2). */
function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  return bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}
