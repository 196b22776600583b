import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTemporaryFiles, removeTemporaryFiles } from './remove-temporary-files.js';
import { targetOfTemporary, temporaryPathFor } from './temporary-name.js';
import { makeTempDir } from './test-support.js';
import { writeThroughTemp } from './write-through-temp.js';

const helper = 'unbounded-agent-nspawn-lifecycle';
const isOurs = (name: string) => name === helper || name === 'aks-flex-node';

describe('temporary names (issue 22 item 5)', () => {
  it('issue22#5 every temporary path the writers make is recognised, with its target', () => {
    const temp = temporaryPathFor(`/opt/unbounded/agent/bin/${helper}`);
    expect(path.dirname(temp)).toBe('/opt/unbounded/agent/bin');
    expect(path.basename(temp)).toMatch(/^\.unbounded-agent-nspawn-lifecycle\.[0-9a-f]{12}\.tmp$/);
    expect(targetOfTemporary(path.basename(temp))).toBe(helper);
  });

  it.each([
    ['no random part', `.${helper}.tmp`],
    ['a short random part', `.${helper}.0123.tmp`],
    ['no leading dot', `${helper}.0123456789ab.tmp`],
    ['another suffix', `.${helper}.0123456789ab.bak`],
    ['upper-case hex', `.${helper}.0123456789AB.tmp`],
  ])('issue22#5 %s is not a temporary name', (_case, name) => {
    expect(targetOfTemporary(name)).toBeUndefined();
  });

  it("issue22#5 a write stopped before its rename leaves a name the writers' pattern finds", async () => {
    const dir = await makeTempDir();
    const target = path.join(dir, helper);
    // The fill never returns, as a write killed mid-copy never renames; the
    // temporary file exists once the fill is called.
    const { promise: filling, resolve: fillCalled } = Promise.withResolvers<undefined>();
    const stopped = writeThroughTemp(target, 0o755, () => {
      fillCalled(undefined);
      return new Promise(() => undefined);
    });
    await filling;
    const [left] = await readdir(dir);
    expect(left).toBeDefined();
    expect(targetOfTemporary(left ?? '')).toBe(helper);
    void stopped; // Never settles; the process ends with the test file.
  });
});

describe('removeTemporaryFiles (issue 22 item 5)', () => {
  it("issue22#5 removes the product's temporary files and links; an operator's files stay; twice is harmless", async () => {
    const dir = await makeTempDir();
    const ours = [
      path.join(dir, `.${helper}.0123456789ab.tmp`),
      path.join(dir, '.aks-flex-node.abcdefabcdef.tmp'),
    ];
    await writeFile(ours[0] ?? '', 'partial helper');
    await symlink('/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current', ours[1] ?? '');
    const kept = [
      '.my-tool.0123456789ab.tmp', // named like ours, for a file the product does not write
      `.${helper}.tmp`,
      `${helper}.0123456789ab.tmp`,
      'aks-flex-node',
      helper,
    ];
    for (const name of kept) await writeFile(path.join(dir, name), 'operator');
    // A directory named like ours is nobody's temporary file.
    await mkdir(path.join(dir, '.aks-flex-node.fedcba987654.tmp'));
    kept.push('.aks-flex-node.fedcba987654.tmp');

    expect((await findTemporaryFiles(dir, isOurs)).sort()).toEqual([...ours].sort());
    expect((await removeTemporaryFiles(dir, isOurs)).sort()).toEqual([...ours].sort());
    expect((await readdir(dir)).sort()).toEqual([...kept].sort());
    expect(await removeTemporaryFiles(dir, isOurs)).toEqual([]);
  });

  it('issue22#5 a missing directory has none', async () => {
    const dir = await makeTempDir();
    expect(await removeTemporaryFiles(path.join(dir, 'missing'), isOurs)).toEqual([]);
  });
});
