import { readlinkSync } from 'node:fs';
import type { Host } from './host.js';
import { runOrThrow } from './run-or-throw.js';

/**
 * Refuses (throws) when the host shares this machine's network namespace.
 * Reset and uninstall.sh delete interfaces, policy routes and nft tables, and
 * the real-node fixture creates them: done outside a namespace of the host's
 * own they would change the machine the tests run on. The hosts boot with
 * `--private-network`, so this only fails if that ever stops being true.
 */
export async function refuseSharedNetwork(host: Host, purpose: string): Promise<void> {
  const ours = readlinkSync('/proc/self/ns/net');
  const theirs = (await runOrThrow(host, ['readlink', '/proc/self/ns/net'])).stdout.trim();
  if (theirs === '' || theirs === ours) {
    throw new Error(
      `refusing ${purpose} on ${host.name}: it shares this machine's network namespace (${ours}); ` +
        'e2e hosts must boot with --private-network',
    );
  }
}
