// What test/e2e/docs-run.test.ts does with each `<!-- run: ID -->` block of
// the operator docs (test/docs/doc-blocks.ts), in the order it runs them on
// one booted host: an operator's day from install to uninstall. Data only,
// so the unit test (test/docs/doc-blocks.test.ts) can check every marked
// block has a step here and every step a block, without booting anything.

/** Where the e2e host finds what the docs download from GitHub. */
export const docsMirror = '/var/tmp/aks-flex-node-docs';

/** The version the docs' `<version>` stands for, and the archive reports. */
export const docsVersion = 'v0.0.0-e2e';

/**
 * What a block's text is changed by before it runs, and why: the e2e hosts
 * have a private network (no GitHub), and no sudo (everything runs as root).
 * Applied in this order, to every run block; nothing else is changed.
 */
export const docSubstitutions: readonly {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}[] = [
  {
    from: '<version>',
    to: docsVersion,
    why: 'the placeholder for the release the operator installs',
  },
  {
    from: 'https://raw.githubusercontent.com/Azure/AKSFlexNode/',
    to: `file://${docsMirror}/raw/`,
    why: "the repository's files at a tag: this checkout's scripts, copied under the mirror",
  },
  {
    from: 'https://github.com/Azure/AKSFlexNode/releases/latest/download/',
    to: `file://${docsMirror}/releases/latest/download/`,
    why: "the latest release's archives: this build's archive, copied under the mirror",
  },
];

/**
 * Run before every block, in the same shell: `sudo` runs its command as is
 * (the host runs everything as root and has no sudo), and install.sh's
 * download, which would ask the GitHub API for the latest release, takes
 * the mirror's archive through the documented `AKS_FLEX_NODE_DOWNLOAD_URL`.
 */
export const docPrelude = [
  'set -o pipefail',
  'sudo() { "$@"; }',
  `export AKS_FLEX_NODE_DOWNLOAD_URL=file://${docsMirror}/releases/download/${docsVersion}/aks-flex-node-linux-amd64.tar.gz`,
].join('\n');

/** One run block: run as a command, or written as the file it shows. */
export interface DocStep {
  readonly id: string;
  /** `command`: run in bash; `file`: the block is the file at `path`. */
  readonly kind: 'command' | 'file';
  /** The working directory of a command, or the file a `file` block is written to. */
  readonly path: string;
  /** The exit code the docs promise (0 unless they say otherwise). */
  readonly exitCode?: number;
  /** Lines the docs show or promise, expected in the output (stdout and stderr). */
  readonly output?: readonly RegExp[];
}

/** Every run block, in the order the e2e test runs them (each page's own blocks keep their order). */
export const docSteps: readonly DocStep[] = [
  // getting-started.md: an operator without Butane puts bootstrap.env into the release's .ign.
  { id: 'bootstrap-env', kind: 'file', path: '/root/node/bootstrap.env' },
  { id: 'ign-with-jq', kind: 'command', path: '/root/node' },
  // operations.md: install, then (the prose) start.
  { id: 'install', kind: 'command', path: '/root', output: [/Binary installed to \/\S+/] },
  // migration.md: where the installed host stands.
  {
    id: 'where-a-host-stands',
    kind: 'command',
    path: '/root',
    output: [/^host root: +\/opt\/unbounded\/agent is installed/m, /"hostRoot"/],
  },
  // operations.md: both slots broken, the documented reinstall.
  { id: 'reinstall', kind: 'command', path: '/root' },
  // operations.md: reset, then uninstall.
  { id: 'reset', kind: 'command', path: '/root', output: [/^Reset succeeded: /m] },
  { id: 'uninstall', kind: 'command', path: '/root/release' },
];
