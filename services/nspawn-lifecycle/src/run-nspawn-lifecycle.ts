import { parseNspawnMachine } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';
import { createHookLog, type LogSink } from './hook-log.js';
import { runPostStart } from './post-start.js';
import { runPreStart } from './pre-start.js';
import { hookSystemctl, runReconcile, type ReconcileSystemctl } from './reconcile.js';

const phases = ['pre-start', 'post-start', 'reconcile'] as const;
type Phase = (typeof phases)[number];

/**
 * How long pre-start waits for the daemon. Connections made while it
 * restarts wait in the socket unit's backlog; this bounds the machine's
 * start delay when the daemon never comes back.
 */
export const preStartTimeoutMs = 30_000;

/** The host the hook runs on; tests replace parts of it. */
export interface NspawnLifecycleOptions {
  socketPath: string;
  stateDir: string;
  timeoutMs: number;
  systemctl: ReconcileSystemctl;
  sink: LogSink;
  stdout: { write(text: string): unknown };
}

const usage = `usage: aks-flex-node nspawn-lifecycle pre-start|post-start|reconcile MACHINE

The nspawn machines' hooks run this; MACHINE is kube1 or kube2.
  pre-start   asks the daemon to migrate the host root and rewrite the machine's hooks
              (the machine keeps its config when no daemon answers)
  post-start  rewires GPU devices into the started machine, when it has any
  reconcile   restarts the machine's unit, which runs both hooks again`;

function defaults(): NspawnLifecycleOptions {
  return {
    socketPath: hostPaths.socket,
    stateDir: hostPaths.nspawnLifecycleStateDir,
    timeoutMs: preStartTimeoutMs,
    systemctl: hookSystemctl(),
    sink: process.stderr,
    stdout: process.stdout,
  };
}

/**
 * `aks-flex-node nspawn-lifecycle PHASE MACHINE` (hidden; the generated hooks
 * run it as `<helper> nspawn-lifecycle <phase> <machine>`). The phase and the
 * machine are checked before anything else runs. Resolves with the exit code.
 *
 * Throws INVALID_ARGUMENT for a bad command line or an unknown machine.
 */
export async function runNspawnLifecycle(
  args: string[],
  overrides: Partial<NspawnLifecycleOptions> = {},
): Promise<number> {
  const options = { ...defaults(), ...overrides };
  if (args.includes('-h') || args.includes('--help')) {
    options.stdout.write(`${usage}\n`);
    return 0;
  }
  const [phaseArg, machineArg, ...extra] = args;
  const phase = parsePhase(phaseArg);
  if (machineArg === undefined || extra.length > 0) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `nspawn-lifecycle ${phase} takes exactly one machine, got ${String(args.length - 1)} arguments`,
      { hint: 'run `aks-flex-node nspawn-lifecycle --help`' },
    );
  }
  const machine = parseNspawnMachine(machineArg);
  const log = createHookLog({ phase, machine }, options.sink);
  switch (phase) {
    case 'pre-start':
      return runPreStart(machine, {
        socketPath: options.socketPath,
        timeoutMs: options.timeoutMs,
        log,
      });
    case 'post-start':
      return runPostStart(machine, { stateDir: options.stateDir, log });
    case 'reconcile':
      return runReconcile(machine, { systemctl: options.systemctl, log });
  }
}

function parsePhase(value: string | undefined): Phase {
  const phase = phases.find((known) => known === value);
  if (phase !== undefined) return phase;
  throw new AgentError(
    'INVALID_ARGUMENT',
    value === undefined
      ? 'nspawn-lifecycle needs a phase and a machine'
      : `unknown nspawn-lifecycle phase ${JSON.stringify(value)}`,
    {
      hint: `name one of ${phases.join(', ')}, then the machine (run \`aks-flex-node nspawn-lifecycle --help\`)`,
    },
  );
}
