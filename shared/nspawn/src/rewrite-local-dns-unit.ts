import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { canonicalPath, cleanPath, makeIoError, writeFileAtomic } from '@aks-flex-node/fs';
import { localDnsNetworkFile, unitNames, type HostPaths } from '@aks-flex-node/layout';
import { isNotFound, type Logger } from '@aks-flex-node/log';

/** What {@link rewriteLocalDnsUnit} found and did. */
export interface RewrittenLocalDnsUnit {
  /** The unit file, `<unitDir>/unbounded-localdns-network.service`. */
  unit: string;
  /** The helper the unit names now: `<root>/libexec/unbounded-localdns-network`. */
  helper: string;
  /** Whether the file was rewritten; the caller reloads systemd. */
  changed: boolean;
  /** Helper paths the unit names under no root this product knows, left as they were. */
  foreign: string[];
}

// An absolute path ending in the helper's name, as a whole word: the unit's
// ExecStart and ExecStop run it, possibly quoted or with arguments after it.
const helperReference = new RegExp(
  String.raw`(?<![^\s"'=])(/[^\s"';]*)?/${localDnsNetworkFile.replaceAll('/', '\\/')}(?![^\s"';])`,
  'g',
);

/**
 * Points the machines' LocalDNS network unit at the helper under `root` (the
 * host root, or the legacy root during a move's undo), when the unit exists
 * (spec daemon 5.2 step 4). The Go agent library writes that unit from the
 * machine's goal state, which this product does not render; but the move
 * copies the helper and then removes the legacy one, so a unit still naming
 * `/usr/local/libexec/unbounded-localdns-network` would fail at the next boot
 * and take the machines' DNS with it. So only the helper's path is rewritten,
 * and every other byte of the unit is kept. The unit is not started again:
 * its network is already up. Helper paths under any other prefix are not
 * this product's to move; they are reported in `foreign` and kept.
 *
 * Returns undefined when the host has no LocalDNS unit. Throws HOST_ROOT_IO
 * when the unit exists but cannot be read or written.
 */
export async function rewriteLocalDnsUnit(
  root: string,
  paths: Pick<HostPaths, 'unitDir' | 'legacy' | 'root'>,
  log: Logger,
): Promise<RewrittenLocalDnsUnit | undefined> {
  const unit = path.join(paths.unitDir, unitNames.localDnsNetwork);
  const current = await readUnitIfPresent(unit);
  if (current === undefined) return undefined;
  const helper = path.join(root, localDnsNetworkFile);
  // Either spelling of each root: a Go release wrote /usr/local, and on some
  // images /usr/local is itself a link (/var/usrlocal).
  const knownRoots = new Set<string>();
  for (const known of [paths.legacy, paths.root, root]) {
    knownRoots.add(cleanPath(known));
    knownRoots.add(await canonicalPath(known));
  }
  const foreign: string[] = [];
  const rewritten = current.replace(helperReference, (reference, prefix: string | undefined) => {
    if (prefix !== undefined && knownRoots.has(cleanPath(prefix))) return helper;
    foreign.push(reference);
    return reference;
  });
  if (foreign.length > 0) {
    log.warn(
      { unit, helpers: foreign },
      'the LocalDNS unit names a helper outside the legacy root and the host root; that path is left as it is',
    );
  }
  if (rewritten === current) return { unit, helper, changed: false, foreign };
  try {
    // The unit's own mode is kept, as every other byte is.
    const { mode } = await stat(unit);
    await writeFileAtomic(unit, rewritten, { mode: mode & 0o7777 });
  } catch (error) {
    throw makeIoError('rewrite', unit, error, {
      hint: `the unit still names the helper it named before; point its ExecStart at ${helper}, or restart the agent to retry`,
    });
  }
  log.info({ unit, helper }, 'pointed the LocalDNS network unit at the helper under the root');
  return { unit, helper, changed: true, foreign };
}

async function readUnitIfPresent(unit: string): Promise<string | undefined> {
  try {
    return await readFile(unit, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw makeIoError('read', unit, error, {
      hint: 'the LocalDNS unit must stay readable for the move to point it at the moved helper; fix the file, then restart the agent',
    });
  }
}
