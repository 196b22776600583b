import { exitCodes } from '@aks-flex-node/api';
import { printLine, reportError } from './output.js';
import { asksForHelp, topUsage, usageOf } from './usage.js';

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
  reset: async () => (await import('./commands/reset.js')).runReset,
  unbootstrap: async () => (await import('./commands/reset.js')).runReset,
  // Hidden: the nspawn machines' generated hooks run it, operators do not.
  'nspawn-lifecycle': async () =>
    (await import('@aks-flex-node/nspawn-lifecycle')).runNspawnLifecycle,
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

function runHelp(): Promise<number> {
  printLine(topUsage);
  return Promise.resolve(0);
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  // Help and --version before anything is loaded: they must work on any host, as any user.
  if (name === '-h' || name === '--help') return runHelp();
  if (name === '--version') return (await commands.version?.())?.([]) ?? 0;
  const load = name === undefined ? undefined : commands[name];
  if (name === undefined || load === undefined) {
    process.stderr.write(
      `error: ${name === undefined ? 'no command given' : `unknown command "${name}"`}\n${topUsage}\n`,
    );
    return exitCodes.usage.code;
  }
  if (asksForHelp(args)) {
    printLine(usageOf(name));
    return 0;
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
