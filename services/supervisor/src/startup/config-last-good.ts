import { lstat, readFile } from 'node:fs/promises';
import {
  configParseFailed,
  findUnknownConfigKeys,
  parseConfigJson,
  readConfigFile,
  validateAgentConfig,
  type AgentConfig,
  type UnknownConfigKey,
} from '@aks-flex-node/config';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { errnoCode, messageOf, type Logger } from '@aks-flex-node/log';
import { linkAside, writeFileAtomic } from '@aks-flex-node/fs';

/** The config and its last-good copy, as the daemon's start sees them. */
export interface ConfigFiles {
  configPath: string;
  lastGoodPath: string;
}

/** The config this start runs with, and what it must do about the files. */
export interface StartConfig {
  config: AgentConfig;
  /** The exact bytes the config was read from (the last-good copy's when it is to be restored). */
  text: string;
  /** Set when the config is not JSON and the last-good copy is to be put in its place. */
  restore?: { reason: string };
  /** Keys of the config no release reads (typos, most likely): warned about, kept in the file. */
  unknownKeys?: UnknownConfigKey[];
}

/**
 * Reads the config at the daemon's start: the one reader (shared/config),
 * with one convergence. When the config's bytes are not JSON at all (empty,
 * truncated, garbage: what a torn write after a power loss leaves) and the
 * last-good copy parses and validates, the start runs with the copy and is
 * told to restore it ({@link restoreConfigFromLastGood}, under the guard).
 * Everything else throws the reader's error as before: a config that parses
 * but fails the schema is the operator's edit, never overwritten; a missing,
 * unreadable or oversized file, or a link, is not a torn write either.
 */
export async function readConfigAtStart(files: ConfigFiles): Promise<StartConfig> {
  const text = await readConfigFile(files.configPath);
  let json: unknown;
  try {
    json = parseConfigJson(text, files.configPath);
  } catch (error) {
    if (!configParseFailed(error)) throw error;
    const lastGood = await readLastGood(files.lastGoodPath);
    if (lastGood === undefined || !(await isPlainFile(files.configPath))) throw error;
    return { ...lastGood, restore: { reason: messageOf(error) } };
  }
  return {
    config: validateAgentConfig(json, files.configPath),
    text,
    unknownKeys: findUnknownConfigKeys(json),
  };
}

/** The last-good copy when it is there and parses and validates; undefined otherwise (the copy is only a fallback). */
async function readLastGood(
  lastGoodPath: string,
): Promise<{ config: AgentConfig; text: string } | undefined> {
  try {
    const text = await readConfigFile(lastGoodPath);
    return { config: validateAgentConfig(parseConfigJson(text, lastGoodPath), lastGoodPath), text };
  } catch {
    // A missing or broken copy leaves today's behaviour: the config's own
    // error is thrown, naming the config and the jq hint.
    return undefined;
  }
}

/** A link is the operator's arrangement: replacing it with a file would change what it names. */
async function isPlainFile(file: string): Promise<boolean> {
  return (await lstat(file)).isFile();
}

/**
 * Puts the last-good copy in place of a config that is not JSON. The caller
 * holds the daemon's single-instance guard. Returns where the damaged bytes
 * went, or undefined when the config was fixed meanwhile (it parses now).
 *
 * Set aside first, then restore: the set-aside is a hard link, so the damaged
 * bytes have a name of their own before the config changes; the restore is
 * one atomic rename. A kill after the link leaves the damaged config in place
 * and the next start sets it aside again (one more copy, nothing lost); a kill
 * after the rename leaves a config that parses. Restoring first would lose the
 * damaged bytes, which may hold an edit the operator wants back.
 */
export async function restoreConfigFromLastGood(
  files: ConfigFiles,
  lastGoodText: string,
  reason: string,
  log: Logger,
  now: () => Date,
): Promise<string | undefined> {
  // Read again under the guard: a hand may have fixed the file since.
  try {
    parseConfigJson(await readConfigFile(files.configPath), files.configPath);
    return undefined;
  } catch (error) {
    if (!configParseFailed(error)) throw error;
  }
  const setAsideAs = await linkAside(files.configPath, now());
  failpoint(failpoints.configCorruptSetAside);
  await writeFileAtomic(files.configPath, lastGoodText, { mode: 0o600 });
  failpoint(failpoints.configRestored);
  log.warn(
    {
      path: files.configPath,
      lastGood: files.lastGoodPath,
      setAsideAs,
      reason,
    },
    'the config is not JSON; restored it from its last-good copy and kept the damaged bytes',
  );
  return setAsideAs;
}

/** What `status` says after a restore. */
export function describeConfigRestore(
  files: ConfigFiles,
  setAsideAs: string,
  reason: string,
): string {
  return `restored ${files.configPath} from its last-good copy ${files.lastGoodPath} (${reason}); the damaged bytes are kept as ${setAsideAs}`;
}

/**
 * Keeps the bytes this start served with as the last-good copy, written only
 * when they differ from the copy (a start does not rewrite it every time).
 */
export async function keepConfigLastGood(
  files: ConfigFiles,
  text: string,
  log: Logger,
): Promise<void> {
  try {
    let existing: string | undefined;
    try {
      existing = await readFile(files.lastGoodPath, 'utf8');
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
    }
    if (existing === text) return;
    await writeFileAtomic(files.lastGoodPath, text, { mode: 0o600 });
    log.info({ path: files.lastGoodPath }, "kept the config's bytes as its last-good copy");
  } catch (error) {
    // Only a fallback for a later torn write: this start serves without it.
    log.warn(
      { err: error, path: files.lastGoodPath },
      "could not keep the config's last-good copy; a torn config then needs a hand edit",
    );
  }
}
