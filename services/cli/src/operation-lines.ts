import type { Operation } from '@aks-flex-node/api';

/** Bytes as MiB with one decimal, never float noise like 11.000000000000002. */
export function formatMiB(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/** An operation in one line: id, kind, state, phase and, for a download, its progress. */
export function describeOperationLine(operation: Operation): string {
  const progress =
    operation.receivedBytes === undefined
      ? ''
      : `, ${formatMiB(operation.receivedBytes)}${operation.totalBytes === undefined ? '' : `/${formatMiB(operation.totalBytes)}`} MiB`;
  const ended = operation.finishedAt === undefined ? '' : ` at ${operation.finishedAt}`;
  return `${operation.id} (${operation.kind}) ${operation.state}${ended}, phase ${operation.phase}${progress}`;
}

/** An operation in full, a field a line, for `operations ID`. */
export function describeOperationRecord(operation: Operation): string[] {
  const lines = [describeOperationLine(operation)];
  const field = (name: string, value: string | undefined) => {
    if (value !== undefined) lines.push(`  ${`${name}:`.padEnd(10)}${value}`);
  };
  field('started', operation.startedAt);
  field('switched', operation.switchedAt);
  field('finished', operation.finishedAt);
  field('source', operation.sourceUrl);
  field('from', operation.fromPath);
  field('to', operation.toPath);
  field('version', operation.toVersion);
  field('result', operation.message);
  field('code', operation.code);
  field('hint', operation.hint);
  for (const removed of operation.removed ?? []) field('removed', removed);
  for (const left of operation.left ?? []) field('left', left);
  field('kept', operation.keptBinary);
  return lines;
}
