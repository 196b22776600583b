import { exitCodeFor, exitCodes } from '@aks-flex-node/api';
import { AgentError, messageOf } from '@aks-flex-node/log';

/**
 * The only module that writes to the terminal. Human text goes to stdout;
 * `--json` prints the API's object as it is; errors go to stderr as an
 * `error:` line and a `hint:` line.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Prints one line of human-readable text. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Prints an error for the operator and returns the exit code from the table. */
export function reportError(error: unknown): number {
  if (error instanceof AgentError) {
    process.stderr.write(`error: ${error.message}\n`);
    if (error.hint !== undefined) process.stderr.write(`hint: ${error.hint}\n`);
    return exitCodeFor(error.code);
  }
  process.stderr.write(`error: ${messageOf(error)}\n`);
  if (
    error instanceof Error &&
    error.stack !== undefined &&
    process.env.AKS_FLEX_NODE_DEBUG === '1'
  ) {
    process.stderr.write(`${error.stack}\n`);
  }
  process.stderr.write(
    'hint: this is unexpected; run again with AKS_FLEX_NODE_DEBUG=1 and report the output\n',
  );
  return exitCodes.failure.code;
}

/**
 * Asks a yes/no question on the terminal; only y or yes (any case) is a yes.
 * Callers ask only when stdin and stdout are a terminal: scripts never see a prompt.
 */
export async function askYesNo(question: string): Promise<boolean> {
  // getBuiltinModule, not import(): the executable's bundles do not support import()
  // (roles/evaluate-common-js.ts), and only the prompt needs readline.
  const { createInterface } = process.getBuiltinModule('node:readline/promises');
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await prompt.question(`${question} (y/N): `)).trim());
  } finally {
    prompt.close();
  }
}
