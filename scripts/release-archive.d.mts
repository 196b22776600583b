/** Types for release-archive.mjs, which the build runs as plain JavaScript. */
export function releaseArch(arch?: string): 'amd64' | 'arm64';
export function releaseMember(arch?: string): string;
export function releaseArchiveName(arch?: string): string;
export function writeReleaseArchive(options: {
  binary: string;
  arch?: string;
  outDir: string;
  workDir: string;
}): string;
