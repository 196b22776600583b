import { hostPaths, hostRootMarkers } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { ownedHostFiles } from './owned-host-files.js';

/** The layout every root holds, written out here so a change in shared/layout shows as a failure. */
const layout = [
  'bin/aks-flex-node',
  'lib/aks-flex-node/aks-flex-node-blue',
  'lib/aks-flex-node/aks-flex-node-green',
  'lib/aks-flex-node/aks-flex-node-current',
  'lib/aks-flex-node/aks-flex-node-last-good',
  'lib/aks-flex-node/aks-flex-node-recovery.sh',
  'bin/unbounded-agent-nspawn-lifecycle',
  'libexec/unbounded-localdns-network',
];

describe('layout (spec hostroot §1, layout_test)', () => {
  it('hostroot#54 the markers are exactly the four blue/green paths, in order', () => {
    expect(hostRootMarkers()).toEqual([
      'lib/aks-flex-node/aks-flex-node-blue',
      'lib/aks-flex-node/aks-flex-node-green',
      'lib/aks-flex-node/aks-flex-node-current',
      'lib/aks-flex-node/aks-flex-node-last-good',
    ]);
  });

  it('hostroot#55 the owned files are the layout under the host root and under /usr/local', () => {
    const expected = [
      ...layout.map((file) => `/opt/unbounded/agent/${file}`),
      ...layout.map((file) => `/usr/local/${file}`),
    ];
    expect([...ownedHostFiles(hostPaths)].sort()).toEqual(expected.sort());
    expect(ownedHostFiles(hostPaths)).toHaveLength(16);
  });
});
