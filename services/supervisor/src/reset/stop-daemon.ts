import { agentUnits, stopAgentCommand } from '@aks-flex-node/layout';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import {
  createSystemctl,
  runCommand,
  signalThatEndedCommand,
  type CommandRunner,
} from '@aks-flex-node/systemd';

/**
 * Stops this daemon after its own reset, under systemd: the stop of the agent
 * and its socket is only queued (--no-block), since a process that waited
 * for its own stop would be killed while waiting. Reset has removed the unit
 * files and reloaded systemd; the running units stay loaded until they stop.
 */
export function createSystemdDaemonStopper(log: Logger, run: CommandRunner = runCommand) {
  const systemctl = createSystemctl({ log, run, timeoutMs: 30_000 });
  return async (reason: string): Promise<void> => {
    try {
      await systemctl.stopNoBlock(agentUnits);
    } catch (error) {
      // The stop it queued can reach this systemctl with SIGTERM before it
      // exits: the journal shows it once reset has removed the unit file and
      // reloaded systemd, whose reloaded unit no longer keeps the file's
      // KillMode=mixed. Killed so, it had queued the stop, which is under way.
      // Any other failure is one: the daemon would keep serving a reset host.
      if (signalThatEndedCommand(error) === 'SIGTERM') {
        log.info({ reason }, 'the stop of the agent unit began before systemctl returned');
        return;
      }
      throw new AgentError('SYSTEMD_FAILED', messageOf(error), {
        cause: error,
        hint: `stop it with \`${stopAgentCommand}\``,
      });
    }
    log.info({ reason }, 'queued the stop of the agent unit');
  };
}

/** A daemon started by hand stops itself, shortly, so the request's stream is answered first. */
export function createSelfDaemonStopper(requestStop: (reason: string) => void) {
  return (reason: string): Promise<void> => {
    setTimeout(() => {
      requestStop(reason);
    }, 200);
    return Promise.resolve();
  };
}
