/** One line of `/proc/self/mountinfo`, with the fields the agent reads. */
export interface MountEntry {
  readonly mountPoint: string;
  /** Per-mount options (field 6): `ro`, `noexec`, … */
  readonly mountOptions: readonly string[];
  readonly fsType: string;
  /** Per-superblock options (after the separator): `ro` can appear only here. */
  readonly superOptions: readonly string[];
}

/**
 * Parses mountinfo text (proc(5)). Optional fields vary in number, so the
 * fields after them are found by the lone `-` separator. Lines that do not
 * have that shape are skipped rather than guessed at.
 */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-', 6);
    const mountPoint = fields[4];
    const mountOptions = fields[5];
    const fsType = fields[separator + 1];
    if (
      separator < 0 ||
      mountPoint === undefined ||
      mountOptions === undefined ||
      fsType === undefined
    ) {
      continue;
    }
    entries.push({
      mountPoint: decodeMountinfoEscapes(mountPoint),
      mountOptions: mountOptions.split(','),
      fsType: decodeMountinfoEscapes(fsType),
      superOptions: (fields[separator + 3] ?? '').split(','),
    });
  }
  return entries;
}

/** The kernel writes space, tab, newline and backslash as `\NNN` octal; undo that. */
function decodeMountinfoEscapes(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(parseInt(octal, 8)),
  );
}
