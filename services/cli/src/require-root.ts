import { AgentError } from '@aks-flex-node/log';

/**
 * Refuses a command that changes the host when this process is not root,
 * before it touches anything: NOT_ROOT, its own exit status (8), so scripts
 * can tell it from a command line they got wrong.
 */
export function requireRoot(command: string, why: string): void {
  if (process.geteuid?.() === 0) return;
  throw new AgentError('NOT_ROOT', `${command} must run as root: ${why}`, {
    hint: `run it again as root, for example \`sudo aks-flex-node ${command}\``,
  });
}
