import { spawnSync } from 'node:child_process';

/**
 * Why the move's namespace suites cannot run here, or undefined when they
 * can. They need root and `unshare -m`, but not the built executable: they
 * run shared/hostroot itself through a bundled driver.
 */
export function moveSuiteUnavailable(): string | undefined {
  if (process.geteuid?.() !== 0) return 'not running as root';
  const probe = spawnSync('unshare', ['-m', '-n', 'true']);
  if (probe.status !== 0)
    return `unshare -m -n does not work here: ${probe.stderr.toString().trim()}`;
  return undefined;
}
