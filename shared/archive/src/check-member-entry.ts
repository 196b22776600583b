import type { ReadEntry } from 'tar';
import { refuseArchive } from './archive-refusal.js';
import { explainUnsafeEntryName, quoteEntryName } from './check-entry-name.js';
import type { ResolvedExtractOptions } from './extract-options.js';

/** The entry types that are a plain file's bytes ('0' and the pre-POSIX '\0'). */
const regularFileTypes = new Set(['File', 'OldFile']);

/**
 * Refuses any entry but the first regular, non-empty, bounded `member` (spec
 * agentbinary §3.3, exact mode). The release archive holds exactly one file,
 * so anything else means the archive was not made by our build: links could
 * point the slot elsewhere, and extra names are how a smuggled file gets in.
 * Throws UPGRADE_REFUSED.
 */
export function checkMemberEntry(
  entry: ReadEntry,
  rules: ResolvedExtractOptions,
  archivePath: string,
  seenMember: boolean,
): void {
  const refuse = (message: string): Error =>
    refuseArchive(`${message} (in ${archivePath})`, archivePath);
  const name = quoteEntryName(entry.path);
  const unsafe = explainUnsafeEntryName(entry.path);
  if (unsafe !== undefined) throw refuse(`the archive entry ${name} ${unsafe}`);
  if (entry.path !== rules.member) {
    throw refuse(`unexpected member ${name}: the archive may hold only ${rules.member}`);
  }
  if (seenMember) throw refuse(`duplicate member ${name}`);
  if (!regularFileTypes.has(entry.type)) {
    throw refuse(`the member ${name} is a ${entry.type} entry, not a regular file`);
  }
  if (entry.size <= 0) throw refuse(`the member ${name} is empty`);
  if (entry.size > rules.maxExtractedBytes) {
    throw refuse(
      `the member ${name} is ${entry.size} bytes, over the limit of ${rules.maxExtractedBytes} bytes`,
    );
  }
}
