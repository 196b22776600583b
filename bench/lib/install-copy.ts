/**
 * Copies an executable the way the product installs one (shared/fs
 * installFile: the slots, an upgrade's candidate, the machines' copies), so
 * a bench runs it with the page cache in the state an installed agent has.
 * How a file was written decides the size of its page-cache folios, and a
 * process maps whole folios: the build's single write of the executable
 * made the daemon 18-34 MiB larger than the same bytes installed
 * (docs/performance.md, "The executable's pages").
 *   node install-copy.mjs SOURCE TARGET
 */
import { installFile } from '../../shared/fs/src/install-file.js';

const [source, target] = process.argv.slice(2);
if (source === undefined || target === undefined) {
  process.stderr.write('usage: install-copy.mjs SOURCE TARGET\n');
  process.exit(2);
}
await installFile(source, target, { mode: 0o755 });
