import { existsSync } from 'node:fs';

/**
 * Why no scenario runs with SELinux enforcing. The harness boots its hosts
 * as containers that share this machine's kernel, so SELinux in a host is
 * whatever this kernel has, and the machines this project runs on have none.
 */
export function describeSelinuxSupport(): string {
  return existsSync('/sys/fs/selinux/enforce')
    ? 'SELinux: this kernel has SELinux, but the e2e hosts do not load a policy; SELinux relabelling is not tested here (see docs/e2e.md)'
    : 'SELinux: not available on this machine (no /sys/fs/selinux); SELinux relabelling is not tested here (see docs/e2e.md)';
}
