import cliProgress from 'cli-progress';
import type { OperationEvent } from '@aks-flex-node/api';
import { printJson, printNote } from '../output.js';

/** Shows an operation's events: a progress bar on a terminal, phase lines otherwise, JSON lines with --json. */
export interface ProgressView {
  show(event: OperationEvent): void;
  stop(): void;
}

/**
 * Picks the view for the output: JSON lines on stdout, else progress on
 * stderr (stdout carries only the result): a live bar on a terminal, or
 * plain phase lines.
 */
export function createProgressView(json: boolean): ProgressView {
  if (json) {
    return {
      show: (event) => {
        printJson(event);
      },
      stop: () => undefined,
    };
  }
  return process.stderr.isTTY ? createBarView() : createLineView();
}

function createLineView(): ProgressView {
  let lastPhase = '';
  return {
    show: (event) => {
      if (event.phase === lastPhase && event.message === undefined) return;
      lastPhase = event.phase;
      printNote(`${event.phase}${event.message === undefined ? '' : `: ${event.message}`}`);
    },
    stop: () => undefined,
  };
}

function createBarView(): ProgressView {
  const bar = new cliProgress.SingleBar(
    {
      format: '{phase} |{bar}| {percentage}% {value}/{total} MiB',
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const mib = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;
  return {
    show: (event) => {
      if (!started) {
        bar.start(Math.max(mib(event.totalBytes ?? 0), 0.1), 0, { phase: event.phase });
        started = true;
      }
      if (event.totalBytes !== undefined) bar.setTotal(Math.max(mib(event.totalBytes), 0.1));
      bar.update(
        event.receivedBytes === undefined
          ? bar.getProgress() * bar.getTotal()
          : mib(event.receivedBytes),
        {
          phase: event.phase.padEnd(11),
        },
      );
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
