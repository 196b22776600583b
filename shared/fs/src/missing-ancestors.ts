import path from 'node:path';
import { exists } from './exists.js';

/**
 * The directories whose entries change when `dir` is created with its missing
 * parents: each missing directory, deepest first, then the first existing
 * ancestor. Syncing them in that order after a write keeps the file from
 * outliving the directory entries needed to reach it.
 */
export async function listDirectoriesToSync(dir: string): Promise<string[]> {
  const chain: string[] = [];
  let current = dir;
  for (;;) {
    chain.push(current);
    if (await exists(current)) return chain;
    const parent = path.dirname(current);
    if (parent === current) return chain;
    current = parent;
  }
}
