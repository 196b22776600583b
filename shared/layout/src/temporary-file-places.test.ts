import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostLayoutFiles } from './names.js';
import { hostPathsUnder, unitNames } from './paths.js';
import { layoutFilePlaces, temporaryFilePlaces } from './temporary-file-places.js';

const paths = hostPathsUnder('/host');
const places = temporaryFilePlaces(paths);

/** Whether the start sweep counts `file` as one the product writes. */
function isSwept(file: string): boolean {
  return places.some(
    (place) => place.dir === path.dirname(file) && place.isProductFile(path.basename(file)),
  );
}

describe('temporaryFilePlaces (issue 22 item 5)', () => {
  it.each([
    [
      'the nspawn helper under the host root',
      '/host/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
    ],
    ['the plain binary under the legacy root', '/host/usr/local/bin/aks-flex-node'],
    ['a slot', '/host/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green'],
    ['the current link', '/host/usr/local/lib/aks-flex-node/aks-flex-node-current'],
    ['the host root link', '/host/opt/unbounded/agent'],
    ['the config', paths.configFile],
    ["the config's last-good copy", paths.configLastGood],
    ['the signal', paths.signalFile],
    ['the digest record', paths.hostRootAgentDigests],
    ['the agent unit', path.join(paths.unitDir, unitNames.agent)],
    ['the LocalDNS unit', path.join(paths.unitDir, unitNames.localDnsNetwork)],
    ['an operation record', path.join(paths.operationsDir, 'op-1.json')],
    ['the file digests', paths.fileDigestCache],
    ["a machine's copy", '/host/var/lib/machines/kube2/usr/local/bin/aks-flex-node'],
  ])('issue22#5 %s is swept', (_case, file) => {
    expect(isSwept(file)).toBe(true);
  });

  it('issue22#5 every layout file is swept under both roots', () => {
    for (const root of [paths.root, paths.legacy]) {
      for (const rel of hostLayoutFiles()) expect(isSwept(path.join(root, rel)), rel).toBe(true);
    }
  });

  it.each([
    ["an operator's tool beside the binary", '/host/usr/local/bin/my-tool'],
    ["an operator's unit", path.join(paths.unitDir, 'my.service')],
    ['another directory under the host root parent', '/host/opt/unbounded/oci'],
    [
      'a file in the config directory the product does not write',
      path.join(paths.configDir, 'notes'),
    ],
  ])('issue22#5 %s is not swept', (_case, file) => {
    expect(isSwept(file)).toBe(false);
  });

  it('issue22#5 only the legacy root may be read-only', () => {
    const readOnly = places.filter((place) => place.mayBeReadOnly).map((place) => place.dir);
    expect(readOnly.length).toBeGreaterThan(0);
    for (const dir of readOnly) expect(dir.startsWith(`${paths.legacy}/`)).toBe(true);
  });

  it('layoutFilePlaces groups files by directory', () => {
    expect(layoutFilePlaces('/r', ['bin/a', 'bin/b', 'lib/c']).map((place) => place.dir)).toEqual([
      '/r/bin',
      '/r/lib',
    ]);
  });
});
