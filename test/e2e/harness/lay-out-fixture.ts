import type { Host } from './host.js';
import { formatCommandResult } from './run-process.js';
import { writeHostFile } from './write-host-file.js';

/** One entry of a fixture, at an absolute path in the host. */
export type FixtureEntry =
  | { readonly kind: 'file'; readonly content: string | Uint8Array; readonly mode?: number }
  | { readonly kind: 'dir'; readonly mode?: number }
  | { readonly kind: 'symlink'; readonly target: string };

/** Absolute path in the host → what to put there. */
export type Fixture = Readonly<Record<string, FixtureEntry>>;

/**
 * Lays a fixture out in the host, for example what an earlier release left
 * on disk. Entries are created in path order, so a directory's mode is set
 * before its children appear under it.
 */
export async function layOutFixture(host: Host, fixture: Fixture): Promise<void> {
  const paths = Object.keys(fixture).sort();
  for (const entryPath of paths) {
    const entry = fixture[entryPath]!;
    switch (entry.kind) {
      case 'file':
        await writeHostFile(host, entryPath, entry.content, entry.mode ?? 0o644);
        break;
      case 'dir':
        await runFixtureStep(host, [
          'install',
          '-d',
          '-m',
          (entry.mode ?? 0o755).toString(8),
          entryPath,
        ]);
        break;
      case 'symlink':
        await runFixtureStep(host, [
          '/bin/bash',
          '-c',
          'mkdir -p "$(dirname "$2")" && ln -sfn "$1" "$2"',
          'lay-out-fixture',
          entry.target,
          entryPath,
        ]);
        break;
      default: {
        const unknown: never = entry;
        throw new Error(`lay out fixture: unknown entry ${JSON.stringify(unknown)}`);
      }
    }
  }
}

async function runFixtureStep(host: Host, argv: readonly string[]): Promise<void> {
  const result = await host.run(argv);
  if (result.exitCode !== 0) {
    throw new Error(
      `lay out fixture on ${host.name}\n${formatCommandResult(argv.join(' '), result)}`,
    );
  }
}
