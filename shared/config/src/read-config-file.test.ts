import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAgentConfig } from './config.js';
import { maxConfigBytes, readConfigFile } from './read-config-file.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'config-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A config as the Go releases' install scripts render it (spec scripts §3.6 shape, trimmed). */
const goConfig = JSON.stringify({
  azure: {
    subscriptionId: '00000000-0000-0000-0000-000000000000',
    tenantId: 't',
    cloud: 'AzurePublicCloud',
  },
  agent: { logLevel: 'info' },
  kubernetes: { version: '1.30.0' },
});

interface Refusal {
  name: string;
  /** Makes the bad config and returns its path. */
  make: () => Promise<string>;
  message: RegExp;
  hint: RegExp;
}

const refusals: Refusal[] = [
  {
    name: 'issue12#7 a directory',
    make: async () => {
      await mkdir(path.join(tmp, 'config.json'));
      return path.join(tmp, 'config.json');
    },
    message: /it is a directory, not a regular file/,
    hint: /name the JSON config file/,
  },
  {
    name: 'issue12#7 a symbolic link loop',
    make: async () => {
      await symlink(path.join(tmp, 'b'), path.join(tmp, 'a'));
      await symlink(path.join(tmp, 'a'), path.join(tmp, 'b'));
      return path.join(tmp, 'a');
    },
    message: /symbolic links form a loop/,
    hint: /point the path at the JSON config file itself/,
  },
  {
    name: 'issue12#7 /dev/zero, refused before a byte is read',
    make: () => Promise.resolve('/dev/zero'),
    message: /it is a character device, not a regular file/,
    hint: /name the JSON config file/,
  },
  {
    name: 'issue12#7 a FIFO, refused without waiting for a writer',
    make: () => {
      execFileSync('mkfifo', [path.join(tmp, 'fifo')]);
      return Promise.resolve(path.join(tmp, 'fifo'));
    },
    message: /it is a FIFO, not a regular file/,
    hint: /name the JSON config file/,
  },
  {
    name: 'issue12#7 a sparse 512 MiB file, refused by its size',
    make: async () => {
      await writeFile(path.join(tmp, 'huge.json'), '');
      await truncate(path.join(tmp, 'huge.json'), 512 * 1024 * 1024);
      return path.join(tmp, 'huge.json');
    },
    message: new RegExp(`over ${maxConfigBytes} bytes`),
    hint: /a config holds a few settings/,
  },
  {
    name: 'a missing file',
    make: () => Promise.resolve(path.join(tmp, 'missing.json')),
    message: /no such file/,
    hint: /aks-flex-node start/,
  },
  {
    name: 'a path through a file',
    make: async () => {
      await writeFile(path.join(tmp, 'file'), goConfig);
      return path.join(tmp, 'file', 'config.json');
    },
    message: /a parent of it is not a directory/,
    hint: /full path/,
  },
];

describe('readConfigFile', () => {
  it.each(refusals)('$name is refused with INVALID_CONFIG and its own hint', async (row) => {
    const configPath = await row.make();
    const error: unknown = await readConfigFile(configPath).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', path: configPath });
    expect((error as Error).message).toMatch(row.message);
    expect((error as { hint: string }).hint).toMatch(row.hint);
    expect((error as { hint: string }).hint).not.toMatch(/permissions/);
    // readAgentConfig reads through it, so every caller gets the same answer.
    await expect(readAgentConfig(configPath)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  it('reads a config the Go scripts rendered, directly and through a link', async () => {
    await writeFile(path.join(tmp, 'config.json'), goConfig, { mode: 0o600 });
    await symlink(path.join(tmp, 'config.json'), path.join(tmp, 'link.json'));
    expect(await readConfigFile(path.join(tmp, 'config.json'))).toBe(goConfig);
    expect(await readConfigFile(path.join(tmp, 'link.json'))).toBe(goConfig);
    expect((await readAgentConfig(path.join(tmp, 'link.json'))).agent).toEqual({
      logLevel: 'info',
    });
  });

  it('reads a config of exactly the limit', async () => {
    const padded = `${goConfig}${' '.repeat(maxConfigBytes - goConfig.length)}`;
    await writeFile(path.join(tmp, 'config.json'), padded);
    expect((await readConfigFile(path.join(tmp, 'config.json'))).length).toBe(maxConfigBytes);
  });
});
