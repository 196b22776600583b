import { lstat, readlink } from 'node:fs/promises';
import type { ActivationServicePlan } from '@aks-flex-node/api';
import { fileDigest, isRegularExecutable, makeIoError } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';
import { resolveIfPresent } from '../resolve-link.js';

/** What lstat finds at a path, in the words the plan needs. */
export type EntryKind = 'absent' | 'file' | 'symlink' | 'directory' | 'other';

/**
 * The file reads a direct activation's plan makes. Planning only reads, so a
 * plan can be shown to an operator before anything changes (spec §3.6.1).
 */
export interface FileInspector {
  /** Full resolution; undefined when the path, or what a link names, is missing. */
  resolve(file: string): Promise<string | undefined>;
  /** What the path itself is, links not followed. */
  entryKind(file: string): Promise<EntryKind>;
  /** A link's text, exactly as written. */
  readLink(file: string): Promise<string>;
  /** Links followed: a regular file with an execute bit. */
  isRegularExecutable(file: string): Promise<boolean>;
  sha256(file: string): Promise<string>;
}

/** Everything the plan reads: the files, and the service adapter's own preflight. */
export interface ActivationInspector extends FileInspector {
  /** The service adapter's preflight (spec §3.6.3); reads only, and refuses while an AgentUpgrade is pending. */
  servicePlan(): Promise<ActivationServicePlan>;
}

/** The {@link FileInspector} over the real file system. Throws HOST_ROOT_IO with the path. */
export function createFileInspector(): FileInspector {
  return {
    resolve: resolveIfPresent,
    entryKind: async (file) => {
      try {
        const info = await lstat(file);
        if (info.isSymbolicLink()) return 'symlink';
        if (info.isFile()) return 'file';
        return info.isDirectory() ? 'directory' : 'other';
      } catch (error) {
        if (isNotFound(error)) return 'absent';
        throw makeIoError('inspect', file, error);
      }
    },
    readLink: async (file) => {
      try {
        return await readlink(file);
      } catch (error) {
        throw makeIoError('read the link', file, error);
      }
    },
    isRegularExecutable,
    // Through the identity-keyed cache: the active binary is the running
    // daemon's, whose digest its start already took.
    sha256: fileDigest,
  };
}
