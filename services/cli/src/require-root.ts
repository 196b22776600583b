import { AgentError } from '@aks-flex-node/log';

/**
 * Refuses a command that changes the host when this process is not root,
 * before it touches anything: NOT_ROOT, its own exit status (8), so scripts
 * can tell it from a command line they got wrong. The hint repeats the
 * operator's whole command line under sudo (`recover-agent-upgrade` without
 * its required `--message` would only be refused again).
 */
export function requireRoot(
  command: string,
  why: string,
  argv: readonly string[] = process.argv.slice(2),
): void {
  if (process.geteuid?.() === 0) return;
  throw new AgentError('NOT_ROOT', `${command} must run as root: ${why}`, {
    hint: `run it again as root: \`sudo aks-flex-node ${argv.map(shellWord).join(' ')}\``,
  });
}

/** A word as a shell reads it back: bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  if (/^[\w./=:@%+,-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
