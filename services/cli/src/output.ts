import { exitCodeFor, exitCodes } from '@aks-flex-node/api';
import { AgentError, errnoCode, messageOf } from '@aks-flex-node/log';
import { asInvoked } from './runnable-command.js';

/**
 * The only module that writes to the terminal. Human text goes to stdout;
 * `--json` prints the API's object as it is; errors go to stderr as an
 * `error:` line and a `hint:` line.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/**
 * Lets a reader stop early: `aks-flex-node status | head -3` closes the pipe
 * after three lines, and every write after that fails with EPIPE, which Node
 * reports as an unhandled stream error (a stack trace, exit 1) unless it is
 * handled. The rest of the output has nowhere to go, so it is dropped and the
 * command ends as it would have, with its own exit code: an upgrade a script
 * started is followed to its end whoever stopped reading. Any other error on
 * the terminal's streams is rethrown.
 */
export function dropOutputOnceReaderCloses(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      const code = errnoCode(error);
      // ERR_STREAM_DESTROYED: a write after the EPIPE, to the stream it closed.
      if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') return;
      throw error;
    });
  }
}

/** Prints one line of human-readable text. */
export function printLine(text: string): void {
  process.stdout.write(`${asInvoked(text)}\n`);
}

/** Prints a progress note on stderr (stdout stays the result, and one JSON object with --json). */
export function printNote(text: string): void {
  process.stderr.write(`${asInvoked(text)}\n`);
}

/** Prints an error for the operator and returns the exit code from the table. */
export function reportError(error: unknown): number {
  if (error instanceof AgentError) {
    process.stderr.write(`error: ${asInvoked(error.message)}\n`);
    if (error.hint !== undefined) process.stderr.write(`hint: ${asInvoked(error.hint)}\n`);
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
