/**
 * Hints name commands as `aks-flex-node CMD` (or `sudo aks-flex-node CMD`),
 * but nothing puts that name on PATH: the operator runs the download, or
 * the installed binary by its path. So each backquoted command is printed
 * with the name this process was invoked by, which runs as printed: a path
 * (absolute or relative to the same directory) when one was typed, the bare
 * name when PATH found it.
 */
export function asInvoked(text: string, argv0: string = process.argv0): string {
  if (!argv0.includes('/')) return text;
  return text.replace(/(?<=`(?:sudo )?)aks-flex-node(?= )/g, argv0);
}
