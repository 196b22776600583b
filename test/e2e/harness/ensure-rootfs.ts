import { spawn } from 'node:child_process';
import { rootfsScript } from './e2e-paths.js';

/**
 * Returns the cached Debian rootfs, building it first when its recipe
 * changed. The script is the one implementation (CI calls it too); its
 * progress goes straight to our stderr because an uncached build takes about
 * a minute and silence would look like a hang.
 */
export async function ensureRootfs(): Promise<string> {
  const child = spawn('bash', [rootfsScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n');
  const rootfs = lines.at(-1);
  if (exitCode !== 0 || rootfs === undefined || !rootfs.startsWith('/')) {
    throw new Error(
      `build the e2e rootfs with ${rootfsScript}: exit code ${String(exitCode)}; its stderr above says why`,
    );
  }
  return rootfs;
}
