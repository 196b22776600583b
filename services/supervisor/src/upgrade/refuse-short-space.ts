import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { checkUpgradeSpace, type AgentBinaryPaths } from '@aks-flex-node/agentbinary';
import { makeIoError } from '@aks-flex-node/fs';
import type { UpgradeSource } from './upgrade-source.js';

/**
 * Headroom over the running executable's size when a candidate's size is not
 * known before its download: consecutive releases differ by a few MiB.
 */
const releaseGrowth = 1.1;

/**
 * Refuses, before the request is answered and before anything is written, an
 * upgrade the host's disks cannot hold to its end (the download, the staged
 * candidate, the helper refresh at the upgraded daemon's start). A binary on
 * the host has its exact size; an archive's member is estimated from the
 * running executable, and a remote archive's download from the member (a
 * gzip of an executable is smaller). Throws UPGRADE_REFUSED with the numbers.
 */
export async function refuseShortSpace(
  source: UpgradeSource,
  layout: AgentBinaryPaths,
  context: { runningExecutable: string; downloadsDir: string },
): Promise<void> {
  if (source.kind === 'binary') {
    const candidateBytes = await sizeOf(source.binaryPath);
    await checkUpgradeSpace({ paths: layout, candidateBytes });
    return;
  }
  const candidateBytes = Math.ceil((await sizeOf(context.runningExecutable)) * releaseGrowth);
  const { url } = source.archive;
  // A local archive that cannot be inspected is the download's to report.
  const archiveBytes =
    url.protocol === 'file:'
      ? await sizeOf(fileURLToPath(url)).catch(() => candidateBytes)
      : candidateBytes;
  await checkUpgradeSpace({
    paths: layout,
    candidateBytes,
    download: { dir: context.downloadsDir, bytes: archiveBytes },
  });
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (error) {
    throw makeIoError('inspect', file, error, { code: 'UPGRADE_REFUSED' });
  }
}
