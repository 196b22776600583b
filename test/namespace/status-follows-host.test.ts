import { describe, expect, it } from 'vitest';
import { facts, namespaceUnavailable, runOnPrivateHost, unmanagedDaemon } from './private-host.js';

// The daemon keeps the host view status answers from, and refreshes it on
// file events: a change made behind its back (an operator, the CLI run
// directly, a Go release's layout) shows in the very next status, with no
// wait between the change and the request. A view kept without the events
// answers the host as it was at the first request.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) {
  console.warn(`SKIPPED test/namespace/status-follows-host: ${unavailable}`);
}

/** A literal `$` for bash parameter expansions inside String.raw templates. */
const D = '$';

const scenario = String.raw`${unmanagedDaemon}
ROOT=/opt/unbounded/agent
LEGACY_DIR=/usr/local/lib/aks-flex-node
seen() { # NAME: status's host-root state, planned root and activation, right after the change
  local status
  status=$("$BINARY" status --json)
  echo "${D}{1}=$(grep -o '"state":"[a-z]*"' <<<"$status" | head -1 | cut -d'"' -f4)" \
    "$(grep -o '"planned":"[^"]*"' <<<"$status" | cut -d'"' -f4)" \
    "$(grep -o '"activationInProgress":[a-z]*' <<<"$status" | cut -d: -f2)"
}
install_agent
start_daemon
seen before
# Another process takes the activation lock (the lockfile, as the CLI run directly does), then drops it.
mkdir /run/aks-flex-node/activation.lock
seen lockTaken
rmdir /run/aks-flex-node/activation.lock
seen lockDropped
# An operator marks the move unfinished in the root, then clears it.
touch "$ROOT/.moving"
seen markerMade
rm "$ROOT/.moving"
seen markerGone
# The root directory is replaced by the link a legacy host has: the watch on
# the old directory must not be the one status relies on afterwards.
mv "$ROOT" /opt/unbounded/agent.old
ln -s /usr/local "$ROOT"
seen linked
# A Go release lays its current pointer in the legacy layout (a directory not
# there until now): the planned root follows it.
mkdir -p "$LEGACY_DIR"
ln -s "$LEGACY_DIR/aks-flex-node-blue" "$LEGACY_DIR/aks-flex-node-current"
seen pointerLaid
# The pointer swapped to the other slot, as a Go release switches: still an installation there.
ln -s "$LEGACY_DIR/aks-flex-node-green" "$LEGACY_DIR/aks-flex-node-current.new"
mv -T "$LEGACY_DIR/aks-flex-node-current.new" "$LEGACY_DIR/aks-flex-node-current"
seen pointerSwapped
rm "$LEGACY_DIR/aks-flex-node-current"
seen pointerGone
# Back to the real directory; its marker is seen through the new watch.
rm "$ROOT"
mv /opt/unbounded/agent.old "$ROOT"
seen restored
touch "$ROOT/.moving"
seen markerInNewRoot
rm "$ROOT/.moving"
echo "watchWarnings=$(grep -c 'cannot watch' /tmp/daemon.log || true)"
stop_daemon
`;

describe.skipIf(unavailable !== undefined)('status follows the host', () => {
  it('shows changes made behind the daemon at the next request: the lock, the marker, the root replaced, a legacy pointer', () => {
    const run = runOnPrivateHost(scenario, 120_000);
    const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
    expect(run.status, context).toBe(0);
    const seen = facts(run.stdout);
    expect(seen, context).toEqual({
      before: 'installed /opt/unbounded/agent false',
      lockTaken: 'installed /opt/unbounded/agent true',
      lockDropped: 'installed /opt/unbounded/agent false',
      markerMade: 'moving /opt/unbounded/agent false',
      markerGone: 'installed /opt/unbounded/agent false',
      linked: 'linked /opt/unbounded/agent false',
      pointerLaid: 'linked /usr/local false',
      pointerSwapped: 'linked /usr/local false',
      pointerGone: 'linked /opt/unbounded/agent false',
      restored: 'installed /opt/unbounded/agent false',
      markerInNewRoot: 'moving /opt/unbounded/agent false',
      watchWarnings: '0',
    });
  });
});
