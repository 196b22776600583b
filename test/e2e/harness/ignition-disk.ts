import {
  mkdirSync,
  realpathSync,
  symlinkSync,
  chmodSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import path from 'node:path';
import type { IgnitionConfig } from '../../../scripts/ignition/render-butane.js';

/**
 * Writes an Ignition config onto a machine's disk before its first boot, as
 * Ignition's files stage does from the initramfs: directories and files with
 * their modes (root-owned, missing parents 0755), units into
 * /etc/systemd/system, and an enabled unit linked into the `.wants` of its
 * `WantedBy=` target. Ignition records enabling as a preset that the first
 * boot applies; the link is what applying it leaves, written directly so
 * the test does not depend on how this systemd treats a first boot.
 * Only what the template renders is supported; anything else throws.
 */
export function writeIgnitionToDisk(merged: string, config: IgnitionConfig): void {
  for (const dir of config.storage.directories) {
    const target = insideDisk(merged, dir.path);
    mkdirSync(target, { recursive: true, mode: 0o755 });
    chmodSync(target, dir.mode);
  }
  for (const file of config.storage.files) {
    const target = insideDisk(merged, file.path);
    if (!file.overwrite && existsSync(target)) {
      throw new Error(`ignition: ${file.path} exists and overwrite is false`);
    }
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, decodeDataUrl(file.contents.source, file.path), { mode: file.mode });
    // Explicitly, because the umask decides what writeFile's mode becomes.
    chmodSync(target, file.mode);
  }
  for (const unit of config.systemd.units) {
    const unitPath = insideDisk(merged, path.join('/etc/systemd/system', unit.name));
    writeFileSync(unitPath, unit.contents, { mode: 0o644 });
    if (unit.enabled) enableUnit(merged, unit.name, unit.contents);
  }
}

function enableUnit(merged: string, name: string, contents: string): void {
  const targets = /^WantedBy=(.+)$/m.exec(contents)?.[1]?.trim().split(/\s+/) ?? [];
  if (targets.length === 0) throw new Error(`ignition: ${name} is enabled but has no WantedBy=`);
  for (const target of targets) {
    const wants = insideDisk(merged, `/etc/systemd/system/${target}.wants`);
    mkdirSync(wants, { recursive: true, mode: 0o755 });
    symlinkSync(`/etc/systemd/system/${name}`, path.join(wants, name));
  }
}

/** Ignition's data URLs: `data:;base64,` (this translation) or `data:,` percent-encoded (Butane). */
function decodeDataUrl(source: string, file: string): Buffer {
  const base64 = /^data:[^,]*;base64,(.*)$/s.exec(source);
  if (base64?.[1] !== undefined) return Buffer.from(base64[1], 'base64');
  const plain = /^data:[^,;]*,(.*)$/s.exec(source);
  if (plain?.[1] !== undefined) return Buffer.from(decodeURIComponent(plain[1]), 'utf8');
  throw new Error(`ignition: ${file}: only data URLs are supported, not ${source.slice(0, 20)}`);
}

/**
 * The path on the disk for an absolute path in the machine. Its existing
 * parent must resolve inside the disk, so a link in the image can never
 * redirect a write onto this machine.
 */
function insideDisk(merged: string, machinePath: string): string {
  if (!path.isAbsolute(machinePath)) throw new Error(`ignition: ${machinePath} is not absolute`);
  const target = path.join(merged, machinePath);
  let existing = path.dirname(target);
  while (!existsSync(existing)) existing = path.dirname(existing);
  const root = realpathSync(merged);
  const resolved = realpathSync(existing);
  if (resolved !== root && !resolved.startsWith(`${root}${path.sep}`)) {
    throw new Error(`ignition: ${machinePath} resolves outside the machine's disk`);
  }
  return target;
}
