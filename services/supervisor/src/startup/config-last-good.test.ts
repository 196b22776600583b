import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentError, createSilentLogger } from '@aks-flex-node/log';
import {
  keepConfigLastGood,
  readConfigAtStart,
  restoreConfigFromLastGood,
  type ConfigFiles,
} from './config-last-good.js';

const valid = `${JSON.stringify({ agent: { logLevel: 'debug' } }, null, 2)}\n`;
const schemaError = '{"agent":{"logLevel":"loud"}}\n';
const log = createSilentLogger();
const permissions = (mode: number) => mode & 0o777;
const now = () => new Date('2026-12-03T14:30:00.123Z');

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function filesWith(config: string, lastGood?: string): Promise<ConfigFiles> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'config-last-good-'));
  dirs.push(dir);
  const files = {
    configPath: path.join(dir, 'config.json'),
    lastGoodPath: path.join(dir, 'config.json.last-good'),
  };
  await writeFile(files.configPath, config, { mode: 0o600 });
  if (lastGood !== undefined) await writeFile(files.lastGoodPath, lastGood, { mode: 0o600 });
  return files;
}

async function startError(files: ConfigFiles): Promise<AgentError> {
  const error = await readConfigAtStart(files).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof AgentError))
    throw new Error(`expected an AgentError, got ${String(error)}`);
  return error;
}

describe('readConfigAtStart: the restore decision (issue 22, the config)', () => {
  it.each([
    ['empty', ''],
    ['garbage', '{garbage'],
    ['truncated', valid.slice(0, 12)],
  ])(
    'a %s config with a valid last-good copy runs with the copy and is restored',
    async (_kind, damaged) => {
      const files = await filesWith(damaged, valid);
      const start = await readConfigAtStart(files);
      expect(start.config.agent?.logLevel).toBe('debug');
      expect(start.text).toBe(valid);
      expect(start.restore?.reason).toContain(`parse ${files.configPath}`);

      const setAsideAs = await restoreConfigFromLastGood(files, start.text, 'torn', log, now);
      expect(setAsideAs).toBe(`${files.configPath}.corrupt-20261203T143000Z`);
      expect(await readFile(files.configPath, 'utf8')).toBe(valid);
      expect(permissions((await stat(files.configPath)).mode)).toBe(0o600);
      expect(await readFile(setAsideAs ?? '', 'utf8')).toBe(damaged);
    },
  );

  it('a config that is not JSON with no last-good copy throws the parse error naming the file and jq', async () => {
    const files = await filesWith('{garbage');
    const error = await startError(files);
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', path: files.configPath });
    expect(error.hint).toContain(`jq . ${files.configPath}`);
  });

  it.each([
    ['not JSON', '{also garbage'],
    ['failing the schema', schemaError],
    ['empty', ''],
  ])(
    'a config that is not JSON with a last-good copy %s throws the config parse error',
    async (_kind, copy) => {
      const files = await filesWith('{garbage', copy);
      const error = await startError(files);
      expect(error.path).toBe(files.configPath);
      expect(error.message).toContain(`parse ${files.configPath}`);
      expect(await readFile(files.configPath, 'utf8')).toBe('{garbage');
    },
  );

  it('issue24#7 a key no release reads is reported with the closest known key, and the config still starts', async () => {
    const files = await filesWith('{"agent":{"logLevl":"debug"}}\n');
    const start = await readConfigAtStart(files);
    expect(start.unknownKeys).toEqual([{ key: 'agent.logLevl', closest: 'agent.logLevel' }]);
    expect(start.text).toBe('{"agent":{"logLevl":"debug"}}\n');
  });

  it('a config that parses but fails the schema is the operator edit: an error, never restored', async () => {
    const files = await filesWith(schemaError, valid);
    const error = await startError(files);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(`${files.configPath} is not a valid config`);
    expect(await readFile(files.configPath, 'utf8')).toBe(schemaError);
  });

  it('a link to a config that is not JSON is not replaced by a file', async () => {
    const files = await filesWith('{garbage', valid);
    const link = path.join(path.dirname(files.configPath), 'linked.json');
    await symlink(files.configPath, link);
    await expect(
      readConfigAtStart({ configPath: link, lastGoodPath: files.lastGoodPath }),
    ).rejects.toMatchObject({ path: link });
  });

  it('a valid config is not restored, and its copy is written only when the bytes differ', async () => {
    const files = await filesWith(valid);
    const start = await readConfigAtStart(files);
    expect(start.restore).toBeUndefined();
    expect(start.text).toBe(valid);

    await keepConfigLastGood(files, start.text, log);
    expect(await readFile(files.lastGoodPath, 'utf8')).toBe(valid);
    expect(permissions((await stat(files.lastGoodPath)).mode)).toBe(0o600);
    const first = await stat(files.lastGoodPath);

    await keepConfigLastGood(files, start.text, log);
    expect((await stat(files.lastGoodPath)).ino).toBe(first.ino); // not rewritten

    const edited = '{"agent":{"logLevel":"warn"}}\n';
    await keepConfigLastGood(files, edited, log);
    expect(await readFile(files.lastGoodPath, 'utf8')).toBe(edited);
    expect((await stat(files.lastGoodPath)).ino).not.toBe(first.ino);
  });

  it('a config fixed by hand before the guard was held is left alone', async () => {
    const files = await filesWith('{garbage', valid);
    const start = await readConfigAtStart(files);
    const fixed = '{"agent":{"logLevel":"warn"}}\n';
    await writeFile(files.configPath, fixed);
    expect(await restoreConfigFromLastGood(files, start.text, 'torn', log, now)).toBeUndefined();
    expect(await readFile(files.configPath, 'utf8')).toBe(fixed);
    expect(
      (await readdir(path.dirname(files.configPath))).some((n) => n.includes('.corrupt-')),
    ).toBe(false);
  });
});
