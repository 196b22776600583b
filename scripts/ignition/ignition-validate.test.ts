// The Ignition config rendered from scripts/aks-flex-node-bootstrap.bu passes
// ignition-validate (Debian's `ignition` package, which ./run installs), and
// a deliberately broken one does not. Debian's ignition 2.14 predates the
// stable Ignition 3.4.0 spec and knows it only as `3.4.0-experimental`, which
// has the same fields the template uses; the check therefore validates a copy
// whose version reads `3.4.0-experimental`, and says so in its failure.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostPaths } from '@aks-flex-node/layout';
import { aclBaseConfig } from './acl-base-config.js';
import type { IgnitionConfig } from './render-butane.js';
import { renderButane } from './render-butane.js';

const scripts = path.resolve(import.meta.dirname, '..');
const templateFile = path.join(scripts, 'aks-flex-node-bootstrap.bu');
const hasValidator = spawnSync('ignition-validate', ['--version']).status === 0;
if (!hasValidator) {
  process.stderr.write(
    'SKIPPED: ignition-validate not installed; apt-get install ignition (./run does)\n',
  );
}

/** Settings quoted as the docs say. */
const bootstrapEnv = [
  "AKS_FLEX_NODE_AGENT_URL='https://example.test/aks-flex-node-linux-amd64.tar.gz?sig=a%2Fb&se=2026'",
  'AKS_FLEX_NODE_AGENT_SHA256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
  `AKS_FLEX_NODE_CONFIG_OVERRIDES="{\\"probe\\":\\"$HOME %h it's\\"}"`,
  '',
].join('\n');

let dir: string;
let config: IgnitionConfig;

/** Runs ignition-validate on the config with the version Debian's validator knows. */
async function validate(ign: unknown): Promise<{ status: number | null; output: string }> {
  const file = path.join(dir, 'validate.ign');
  const experimental = JSON.parse(
    JSON.stringify(ign).replace('"version":"3.4.0"', '"version":"3.4.0-experimental"'),
  ) as unknown;
  await writeFile(file, JSON.stringify(experimental));
  const result = spawnSync('ignition-validate', [file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ignition-validate-'));
  const script = path.join(scripts, 'bootstrap.sh');
  await writeFile(
    path.join(dir, 'bootstrap.sh'),
    existsSync(script) ? await readFile(script) : '#!/usr/bin/env bash\nexit 0\n',
  );
  await writeFile(path.join(dir, 'bootstrap.env'), bootstrapEnv);
  await writeFile(path.join(dir, 'base-config.json'), `${JSON.stringify(aclBaseConfig)}\n`);
  config = await renderButane(await readFile(templateFile, 'utf8'), dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(hasValidator)(
  'ignition-validate (as 3.4.0-experimental, the name Debian ignition 2.14 knows)',
  () => {
    it('issue11 the config rendered from the template is valid', async () => {
      const result = await validate(config);
      expect(result.output).toBe('');
      expect(result.status).toBe(0);
    });

    it('issue11 Debian ignition-validate does not know the stable 3.4.0 name, which is why the version is rewritten', async () => {
      const file = path.join(dir, 'stable.ign');
      await writeFile(file, JSON.stringify(config));
      const result = spawnSync('ignition-validate', [file], { encoding: 'utf8' });
      expect(result.status).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`).toContain('unsupported config version');
    });

    it.each([
      [
        'a relative file path',
        (c: IgnitionConfig) => ({
          ...c,
          storage: {
            ...c.storage,
            files: c.storage.files.map((f) => ({ ...f, path: f.path.slice(1) })),
          },
        }),
        'path not absolute',
      ],
      [
        'a mode that is not a number',
        (c: IgnitionConfig) => ({
          ...c,
          storage: { ...c.storage, directories: [{ path: hostPaths.firstBootDir, mode: '0700' }] },
        }),
        'cannot unmarshal',
      ],
      [
        'a unit without a name',
        (c: IgnitionConfig) => ({
          ...c,
          systemd: { units: c.systemd.units.map((u) => ({ ...u, name: '' })) },
        }),
        'name',
      ],
    ])('issue11 a config with %s fails', async (_, breakIt, message) => {
      const result = await validate(breakIt(config));
      expect(result.status).not.toBe(0);
      expect(result.output).toContain(message);
    });

    it("issue11 the documented jq recipe puts an operator's settings into the release .ign, and the result is valid", async () => {
      await writeFile(path.join(dir, 'aks-flex-node-bootstrap.ign'), JSON.stringify(config));
      await writeFile(path.join(dir, 'my.env'), 'AKS_FLEX_NODE_AUTH=msi\n');
      await writeFile(path.join(dir, 'my-base.json'), '{}\n');
      // The same command as docs/usage/getting-started.md, with the file names of this test.
      execFileSync(
        'bash',
        [
          '-c',
          `jq --arg env "$(base64 -w0 my.env)" --arg base "$(base64 -w0 my-base.json)" '
  (.storage.files[] | select(.path == "/etc/aks-flex-node/first-boot/bootstrap.env") | .contents.source) = "data:;base64," + $env
  | (.storage.files[] | select(.path == "/etc/aks-flex-node/first-boot/base-config.json") | .contents.source) = "data:;base64," + $base
' aks-flex-node-bootstrap.ign > node.ign`,
        ],
        { cwd: dir },
      );
      const node = JSON.parse(await readFile(path.join(dir, 'node.ign'), 'utf8')) as IgnitionConfig;
      const decoded = (file: string): string =>
        Buffer.from(
          node.storage.files
            .find((f) => f.path === file)
            ?.contents.source.replace(/^data:;base64,/, '') ?? '',
          'base64',
        ).toString();
      expect(decoded(hostPaths.firstBootEnv)).toBe('AKS_FLEX_NODE_AUTH=msi\n');
      expect(decoded(hostPaths.firstBootBaseConfig)).toBe('{}\n');
      expect(decoded(hostPaths.firstBootScript)).toBe(
        await readFile(path.join(dir, 'bootstrap.sh'), 'utf8'),
      );
      expect((await validate(node)).status).toBe(0);
    });
  },
);

describe('the test-side Butane translation', () => {
  it('issue11 refuses a feature the template does not use rather than dropping it', async () => {
    const source = `${await readFile(templateFile, 'utf8')}passwd:\n  users: []\n`;
    await expect(renderButane(source, dir)).rejects.toThrow(
      'passwd, which this translation does not support',
    );
  });

  it('issue11 refuses a local file outside the files directory, as butane does', async () => {
    const outside = path.join(path.dirname(dir), `${path.basename(dir)}-outside.env`);
    await writeFile(outside, 'AKS_FLEX_NODE_AUTH=msi\n');
    try {
      const source = (await readFile(templateFile, 'utf8')).replace(
        'local: bootstrap.env',
        `local: ../${path.basename(outside)}`,
      );
      await expect(renderButane(source, dir)).rejects.toThrow('is outside the files directory');
    } finally {
      await rm(outside, { force: true });
    }
  });

  it('issue11 refuses a missing local file', async () => {
    const source = (await readFile(templateFile, 'utf8')).replace(
      'local: bootstrap.env',
      'local: absent.env',
    );
    await expect(renderButane(source, dir)).rejects.toThrow('local file absent.env: not found');
  });
});
