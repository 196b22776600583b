import { exitCodes } from '@aks-flex-node/api';
import { printLine, reportError } from './output.js';

/**
 * Every role is this one executable. The entry dispatches first and each
 * command loads only what it needs, so hot roles (`version`, the nspawn hook,
 * the recovery shim) do not pay for the daemon's libraries.
 */
const commands: Record<string, () => Promise<(args: string[]) => Promise<number>>> = {
  version: async () => (await import('./commands/version.js')).runVersion,
  'host-root': async () => (await import('./commands/host-root.js')).runHostRoot,
  status: async () => (await import('./commands/status.js')).runStatus,
  agent: loadSupervisor,
  daemon: loadSupervisor,
  start: async () => (await import('./commands/start.js')).runStart,
  bootstrap: async () => (await import('./commands/start.js')).runStart,
  'agent-upgrade': async () => (await import('./commands/agent-upgrade.js')).runAgentUpgrade,
  'recover-agent-upgrade': async () =>
    (await import('./commands/recover-agent-upgrade.js')).runRecoverAgentUpgrade,
  'guard-agent-upgrade': async () =>
    (await import('./commands/guard-agent-upgrade.js')).runGuardAgentUpgrade,
  preflight: async () => (await import('./commands/preflight.js')).runPreflight,
  help: () => Promise.resolve(runHelp),
};

/**
 * The daemon role. This dispatcher is the one place the CLI reaches a
 * service, and only through its entry: `agent` parses the flags, the
 * supervisor builds the rest.
 */
async function loadSupervisor(): Promise<(args: string[]) => Promise<number>> {
  const [{ runAgent }, { runSupervisor }] = await Promise.all([
    import('./commands/agent.js'),
    import('@aks-flex-node/supervisor'),
  ]);
  return (args) => runAgent(args, runSupervisor);
}

const usage = `usage: aks-flex-node <command> [flags]

commands:
  version [--json]                 print this build's version
  status [--json]                  what the running daemon reports
  host-root [--planned] [--json]   where the agent's files are (or will be)
  host-root --migrate [--json]     link an earlier release's installation (asks the daemon)
  start [--config PATH] [--json]   install this binary as the agent and start it (root)
  agent-upgrade --url URL [--sha256 HEX] [--json]
                                   upgrade the agent blue/green from a release archive
  agent-upgrade --candidate PATH [--preflight] [--json]
                                   activate a binary already on the host (--preflight: plan only)
  recover-agent-upgrade --message TEXT
                                   restore last-good after a failed upgrade (the recovery unit runs it)
  preflight [--json]               check the host before an install, changing nothing
  agent --config PATH              run the daemon (as the agent unit does)
  help                             print this text

See docs/cli.md for every command and its exit codes.`;

function runHelp(): Promise<number> {
  printLine(usage);
  return Promise.resolve(0);
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  const load = name === undefined ? undefined : commands[name];
  if (load === undefined) {
    process.stderr.write(
      `error: ${name === undefined ? 'no command given' : `unknown command "${name}"`}\n${usage}\n`,
    );
    return exitCodes.usage.code;
  }
  try {
    const run = await load();
    return await run(args);
  } catch (error) {
    return reportError(error);
  }
}

// process.exitCode rather than process.exit(): pending output is flushed first.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportError(error);
  },
);
