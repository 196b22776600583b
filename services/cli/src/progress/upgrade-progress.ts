import cliProgress from 'cli-progress';
import type { OperationEvent } from '@aks-flex-node/api';
import { formatMiB } from '../operation-lines.js';
import { printJson, printNote } from '../output.js';

/** Shows an operation's events: a progress bar on a terminal, phase lines otherwise, JSON lines with --json. */
export interface ProgressView {
  show(event: OperationEvent): void;
  /**
   * Prints a note (stderr) while the progress shows: on a terminal the live
   * bar's line is ended first, so the note never runs on after the bar (and
   * the ^C the terminal echoed); the bar goes on below it.
   */
  note(line: string): void;
  stop(): void;
}

/**
 * Picks the view for the output: JSON lines on stdout, else progress on
 * stderr (stdout carries only the result): a live bar on a terminal, or
 * plain phase lines.
 */
export function createProgressView(
  json: boolean,
  stderr: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
): ProgressView {
  if (json) {
    return {
      show: (event) => {
        printJson(event);
      },
      note: printNote,
      stop: () => undefined,
    };
  }
  return stderr.isTTY === true ? createBarView(stderr) : createLineView();
}

function createLineView(): ProgressView {
  let lastPhase = '';
  return {
    show: (event) => {
      if (event.phase === lastPhase && event.message === undefined) return;
      lastPhase = event.phase;
      printNote(`${event.phase}${event.message === undefined ? '' : `: ${event.message}`}`);
    },
    note: printNote,
    stop: () => undefined,
  };
}

/**
 * The bar counts raw bytes, and the size is written from them once, to one
 * decimal: MiB values added or multiplied as floats print as
 * 11.000000000000002. No size is shown before a download reports one, so the
 * bar never starts at a made-up `0/0.1 MiB`.
 */
function createBarView(terminal: NodeJS.WritableStream): ProgressView {
  const bar = new cliProgress.SingleBar(
    {
      stream: terminal,
      format: '{phase} |{bar}| {percentage}%{size}',
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  let received = 0;
  let total: number | undefined;
  return {
    show: (event) => {
      received = event.receivedBytes ?? received;
      total = event.totalBytes ?? total;
      const payload = { phase: event.phase.padEnd(11), size: downloadSize(received, total) };
      // Until the size is known the bar is empty: one unit, none done.
      const barTotal = Math.max(total ?? 1, 1);
      if (!started) {
        bar.start(barTotal, 0, payload);
        started = true;
      }
      bar.setTotal(barTotal);
      bar.update(total === undefined ? 0 : Math.min(received, barTotal), payload);
    },
    note: (line) => {
      if (started && !stopped) terminal.write('\n');
      printNote(line);
    },
    stop: () => {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}

/** ` 11.0/42.7 MiB` once a download reports its size, else nothing. */
export function downloadSize(receivedBytes: number, totalBytes: number | undefined): string {
  if (totalBytes === undefined) return '';
  return ` ${formatMiB(receivedBytes)}/${formatMiB(totalBytes)} MiB`;
}
