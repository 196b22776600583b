/**
 * Named fixtures for the host-root tests, as spec hostroot §5 names them
 * (newLayout, stageArtifacts, assertArtifactsKept, touch, legacyHost). The Go
 * fixtures' `bin/unbounded-agent-*` names are translated to AKS Flex Node's
 * layout from shared/layout.
 */
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostRootMarkers,
  lastGoodLinkFile,
  localDnsNetworkFile,
  nspawnLifecycleFile,
  recoveryScriptFile,
} from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { expect, onTestFinished } from 'vitest';
import type { HostRootPaths } from './host-root-paths.js';
import { migrateHostRoot } from './migrate-host-root.js';

/** A temp tree shaped like a host: `<tmp>/opt/unbounded/agent` and `<tmp>/usr/local`. */
export interface Layout {
  readonly tmp: string;
  readonly root: string;
  readonly parent: string;
  readonly legacy: string;
  readonly staging: string;
  readonly paths: HostRootPaths;
  /** Set by {@link stageArtifacts}, so invariants know to check them. */
  artifactsStaged: boolean;
}

export const log = createSilentLogger();
export const markers: readonly string[] = hostRootMarkers();

/** ROOT and PARENT do not exist yet; `LEGACY/bin` does, 0755. */
export async function newLayout(): Promise<Layout> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-hostroot-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const root = path.join(tmp, 'opt/unbounded/agent');
  const legacy = path.join(tmp, 'usr/local');
  await mkdir(path.join(legacy, 'bin'), { recursive: true });
  await chmod(path.join(legacy, 'bin'), 0o755);
  return {
    tmp,
    root,
    parent: path.dirname(root),
    legacy,
    staging: `${root}.staging`,
    paths: { root, legacy },
    artifactsStaged: false,
  };
}

/** The host stages offline artifacts in PARENT and has chosen mode 0750 for it. */
export async function stageArtifacts(layout: Layout): Promise<void> {
  const manifest = path.join(layout.parent, 'artifacts/v1.34.2/manifest.json');
  await mkdir(path.dirname(manifest), { recursive: true });
  await writeFile(manifest, 'manifest');
  await chmod(layout.parent, 0o750);
  layout.artifactsStaged = true;
}

export async function assertArtifactsKept(layout: Layout): Promise<void> {
  expect(await readFile(path.join(layout.parent, 'artifacts/v1.34.2/manifest.json'), 'utf8')).toBe(
    'manifest',
  );
  expect(permissions((await stat(layout.parent)).mode)).toBe(0o750);
}

/** mkdir -p the parent, then write the file with an exact mode. */
export async function touch(file: string, content = '', mode = 0o755): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  await chmod(file, mode);
}

/** A symlink with an exact target text, creating the link's parent. */
export async function link(file: string, target: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await symlink(target, file);
}

/**
 * A host an earlier release installed under LEGACY, with artifacts staged in
 * PARENT, then migrated: ROOT is linked. Links have absolute targets, as the
 * earlier releases wrote them. `bin/other-tool` is not part of the layout.
 */
export async function legacyHost(): Promise<Layout> {
  const layout = await newLayout();
  await stageArtifacts(layout);
  const at = (rel: string): string => path.join(layout.legacy, rel);
  await touch(at(blueSlotFile), 'blue');
  await touch(at(greenSlotFile), 'green');
  await touch(at(nspawnLifecycleFile), 'helper');
  await touch(at(recoveryScriptFile), 'recover');
  await touch(at(localDnsNetworkFile), 'dns', 0o700);
  await link(at(currentLinkFile), at(greenSlotFile));
  await link(at(lastGoodLinkFile), at(blueSlotFile));
  await link(at(binaryFile), at(currentLinkFile));
  await touch(at('bin/other-tool'), 'other');
  await migrateHostRoot(layout.paths, log, markers);
  return layout;
}

export function permissions(mode: number): number {
  return mode & 0o7777;
}

/** What is at a path, without following a link. */
export async function kindAt(p: string): Promise<'missing' | 'symlink' | 'directory' | 'file'> {
  try {
    const info = await lstat(p);
    if (info.isSymbolicLink()) return 'symlink';
    return info.isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * Every entry under `dir` with its type, mode and content or link text. Taken
 * before and after an operation, it proves the operation changed nothing there.
 */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    const full = path.join(entry.parentPath, entry.name);
    const mode = permissions((await lstat(full)).mode).toString(8);
    const rel = path.relative(dir, full);
    if (entry.isSymbolicLink()) snapshot[rel] = `link ${await readlink(full)}`;
    else if (entry.isDirectory()) snapshot[rel] = `dir ${mode}`;
    else snapshot[rel] = `file ${mode} ${await readFile(full, 'utf8')}`;
  }
  return snapshot;
}

/**
 * Runs `body` under `mask` and restores the previous umask. The umask is
 * process-wide: vitest.config.ts runs each test file in its own fork (worker
 * threads may not set it at all), and vitest runs a file's tests one after
 * another, so no other test sees the changed mask.
 */
export async function withUmask<T>(mask: number, body: () => Promise<T>): Promise<T> {
  const previous = process.umask(mask);
  try {
    return await body();
  } finally {
    process.umask(previous);
  }
}
