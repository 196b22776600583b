// A translation of exactly the Butane features scripts/aks-flex-node-bootstrap.bu
// uses, for the tests and the release build, on machines without butane:
//   - `variant: flatcar`, `version: 1.1.0`, which Butane renders as Ignition 3.4.0;
//   - `storage.directories` with `path` and `mode`;
//   - `storage.files` with `path`, `mode`, `overwrite` and `contents.local`, a
//     file read from the files directory (`butane --files-dir DIR`);
//   - `systemd.units` with `name`, `enabled` and inline `contents`.
// Anything else is refused rather than dropped, so the template cannot grow a
// feature this translation silently ignores. Where real Butane differs the
// result is equivalent: Butane may gzip a file's contents (and say so in
// `compression`), this always writes an uncompressed base64 data URL.
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

/** The Ignition 3.4.0 config Butane renders from the template's features. */
export interface IgnitionConfig {
  readonly ignition: { readonly version: string };
  readonly storage: {
    readonly directories: readonly IgnitionDirectory[];
    readonly files: readonly IgnitionFile[];
  };
  readonly systemd: { readonly units: readonly IgnitionUnit[] };
}

export interface IgnitionDirectory {
  readonly path: string;
  readonly mode: number;
}

export interface IgnitionFile {
  readonly path: string;
  readonly mode: number;
  readonly overwrite: boolean;
  readonly contents: { readonly source: string };
}

export interface IgnitionUnit {
  readonly name: string;
  readonly enabled: boolean;
  readonly contents: string;
}

/** The Ignition spec version Butane's flatcar 1.1.0 renders. */
export const ignitionVersion = '3.4.0';

type Node = Record<string, unknown>;

/**
 * Renders a Butane config as `butane --strict --files-dir DIR` would, for the
 * features listed at the top of this file. Throws naming the key or file
 * when the config uses anything else or a local file cannot be read.
 */
export async function renderButane(source: string, filesDir: string): Promise<IgnitionConfig> {
  // YAML 1.1, as Butane's parser reads it: `mode: 0700` is octal.
  const doc = asNode(parse(source, { version: '1.1' }), 'the config');
  onlyKeys(doc, ['variant', 'version', 'storage', 'systemd'], 'the config');
  if (doc.variant !== 'flatcar' || doc.version !== '1.1.0') {
    throw new Error(
      `butane: variant ${String(doc.variant)} ${String(doc.version)} is not flatcar 1.1.0`,
    );
  }
  const storage = asNode(doc.storage ?? {}, 'storage');
  onlyKeys(storage, ['directories', 'files'], 'storage');
  const systemd = asNode(doc.systemd ?? {}, 'systemd');
  onlyKeys(systemd, ['units'], 'systemd');
  return {
    ignition: { version: ignitionVersion },
    storage: {
      directories: asList(storage.directories, 'storage.directories').map(toDirectory),
      files: await Promise.all(
        asList(storage.files, 'storage.files').map((file) => toFile(file, filesDir)),
      ),
    },
    systemd: { units: asList(systemd.units, 'systemd.units').map(toUnit) },
  };
}

function toDirectory(entry: unknown): IgnitionDirectory {
  const node = asNode(entry, 'a directory');
  onlyKeys(node, ['path', 'mode'], 'a directory');
  return { path: text(node.path, 'directory path'), mode: mode(node.mode, 'directory mode') };
}

async function toFile(entry: unknown, filesDir: string): Promise<IgnitionFile> {
  const node = asNode(entry, 'a file');
  onlyKeys(node, ['path', 'mode', 'overwrite', 'contents'], 'a file');
  const target = text(node.path, 'file path');
  const contents = asNode(node.contents, `contents of ${target}`);
  onlyKeys(contents, ['local'], `contents of ${target}`);
  const bytes = await readLocal(filesDir, text(contents.local, `local of ${target}`));
  return {
    path: target,
    mode: mode(node.mode, `mode of ${target}`),
    overwrite: node.overwrite === true,
    contents: { source: `data:;base64,${bytes.toString('base64')}` },
  };
}

function toUnit(entry: unknown): IgnitionUnit {
  const node = asNode(entry, 'a unit');
  onlyKeys(node, ['name', 'enabled', 'contents'], 'a unit');
  return {
    name: text(node.name, 'unit name'),
    enabled: node.enabled === true,
    contents: text(node.contents, 'unit contents'),
  };
}

/** Butane refuses a local path that leaves the files directory; so does this. */
async function readLocal(filesDir: string, local: string): Promise<Buffer> {
  const root = await realpath(filesDir);
  const file = path.resolve(root, local);
  const resolved = await realpath(file).catch((err: unknown) => {
    throw new Error(`butane: local file ${local}: not found in ${filesDir}`, { cause: err });
  });
  if (!resolved.startsWith(`${root}${path.sep}`)) {
    throw new Error(`butane: local file ${local} is outside the files directory ${filesDir}`);
  }
  return readFile(resolved);
}

function onlyKeys(node: Node, allowed: readonly string[], where: string): void {
  const unknown = Object.keys(node).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new Error(
      `butane: ${where} uses ${unknown.join(', ')}, which this translation does not support`,
    );
  }
}

function asNode(value: unknown, where: string): Node {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`butane: ${where} is not a mapping`);
  }
  return value as Node;
}

function asList(value: unknown, where: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error(`butane: ${where} is not a list`);
  return value;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`butane: ${what} is missing`);
  return value;
}

function mode(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0o7777) {
    throw new Error(`butane: ${what} is not a file mode`);
  }
  return value;
}
