/**
 * The digest of a 130 MB binary as the product takes it (shared/fs
 * fileSha256: the upgrade's candidate, the machine copies, the active binary
 * when the cache does not know it), against the runtime's own floor in the
 * same run: node:crypto hashing the same bytes already in memory, so the
 * ratio is what reading the file adds. A read stream of 64 KiB chunks, what
 * fileSha256 used before, is measured beside them for reference. CPU time
 * (user + system) of this process per digest, the three interleaved.
 *
 * Bundled and run by bench/file-digest.sh; prints one JSON object.
 *   node file-digest.mjs --file BINARY [--runs 9]
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { fileSha256 } from '../shared/fs/src/file-sha256.js';

const { values } = parseArgs({
  options: { file: { type: 'string' }, runs: { type: 'string', default: '9' } },
});
if (values.file === undefined) throw new Error('--file is required');
const file = values.file;
const runs = Number(values.runs);

const inMemory = await readFile(file);

async function readStreamSha256(): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const kinds = {
  floor: () => Promise.resolve(createHash('sha256').update(inMemory).digest('hex')),
  fileSha256: () => fileSha256(file),
  readStream: readStreamSha256,
} as const;
type Kind = keyof typeof kinds;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const cpuMs: Record<Kind, number[]> = { floor: [], fileSha256: [], readStream: [] };
const expected = await kinds.floor();
for (let run = 0; run < runs; run++) {
  for (const kind of Object.keys(kinds) as Kind[]) {
    const before = process.cpuUsage();
    const digest = await kinds[kind]();
    const used = process.cpuUsage(before);
    // A digest that differs is a broken measurement, not a slow one.
    if (digest !== expected) throw new Error(`${kind} gave ${digest}, not ${expected}`);
    cpuMs[kind].push((used.user + used.system) / 1000);
  }
}

const floor = median(cpuMs.floor);
console.log(
  JSON.stringify({
    file,
    bytes: inMemory.length,
    runs,
    rows: (Object.keys(kinds) as Kind[]).map((kind) => ({
      kind,
      median_cpu_ms: Number(median(cpuMs[kind]).toFixed(1)),
      ratio_to_floor: Number((median(cpuMs[kind]) / floor).toFixed(2)),
    })),
  }),
);
