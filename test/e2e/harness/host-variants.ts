import { appendFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * The kinds of host the product must run on:
 * - `plain`: a stock Debian 12 with systemd;
 * - `acl`: like Azure Container Linux: `/usr` (and so `/usr/local`, `/bin`,
 *   `/sbin`, which are links into it) read-only, `/opt`, `/etc` and `/var`
 *   writable, no package manager;
 * - `noexec`: `/opt` mounted noexec, as hardened hosts do.
 */
export type HostVariant = 'plain' | 'acl' | 'noexec';

interface VariantSpec {
  /**
   * Changes the machine's own disk before its first boot. It writes through
   * the overlay, so the cached rootfs stays untouched and a reboot keeps the
   * change.
   */
  readonly prepareDisk: (merged: string) => void;
  /** systemd-nspawn arguments that make the variant, applied at every boot. */
  readonly nspawnArgs: (merged: string) => string[];
}

const variants: Readonly<Record<HostVariant, VariantSpec>> = {
  plain: {
    prepareDisk: () => undefined,
    nspawnArgs: () => [],
  },
  acl: {
    prepareDisk: removePackageManager,
    // Bound read-only by nspawn rather than remounted from inside, so /usr is
    // read-only from the first instruction of boot, as with dm-verity.
    nspawnArgs: (merged) => [`--bind-ro=${path.join(merged, 'usr')}:/usr`],
  },
  noexec: {
    prepareDisk: mountOptNoexecAtBoot,
    nspawnArgs: () => [],
  },
};

/** Every variant, for scenarios that run on each. */
export const hostVariants: readonly HostVariant[] = ['plain', 'acl', 'noexec'];

/** Prepares a fresh machine disk for the variant. */
export function prepareVariantDisk(variant: HostVariant, merged: string): void {
  variants[variant].prepareDisk(merged);
}

/** The nspawn arguments for booting the variant. */
export function variantNspawnArgs(variant: HostVariant, merged: string): string[] {
  return variants[variant].nspawnArgs(merged);
}

/**
 * Azure Container Linux has no apt or dpkg. Removing them (rather than
 * only their binaries' exec bit) makes a script that probes with
 * `command -v apt-get` take the same branch it would take there.
 */
function removePackageManager(merged: string): void {
  for (const dir of ['usr/bin', 'usr/sbin']) {
    for (const name of readdirSync(path.join(merged, dir))) {
      if (/^(apt|dpkg)/.test(name)) rmSync(path.join(merged, dir, name), { force: true });
    }
  }
  for (const dir of [
    'etc/apt',
    'etc/dpkg',
    'usr/lib/apt',
    'usr/lib/dpkg',
    'var/lib/apt',
    'var/lib/dpkg',
    'var/cache/apt',
  ]) {
    rmSync(path.join(merged, dir), { recursive: true, force: true });
  }
}

/**
 * An fstab line, as an operator would configure it: systemd mounts /opt
 * noexec early in every boot, before any unit of the product starts.
 */
function mountOptNoexecAtBoot(merged: string): void {
  appendFileSync(
    path.join(merged, 'etc/fstab'),
    '# aks-flex-node e2e: /opt is noexec on this host\n/opt /opt none bind,noexec 0 0\n',
  );
}
