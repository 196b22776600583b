/** Aborts when no progress was reported for a while. */
export interface StallWatchdog {
  /** Aborts once `stallMs` pass without {@link StallWatchdog.progress}. */
  readonly signal: AbortSignal;
  /** Bytes arrived: the clock starts again. */
  progress: () => void;
  /** The transfer ended; the watchdog never fires after this. */
  stop: () => void;
}

/**
 * Watches a transfer for progress. A server that accepts the connection and
 * then sends nothing would otherwise hold the activation lock until the
 * whole download's timeout (ten minutes), refusing every other mutation.
 */
export function watchForStall(stallMs: number): StallWatchdog {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      controller.abort(new Error(`no bytes arrived for ${stallMs} ms`));
    }, stallMs);
  };
  arm();
  return {
    signal: controller.signal,
    progress: () => {
      if (!controller.signal.aborted) arm();
    },
    stop: () => {
      clearTimeout(timer);
    },
  };
}
