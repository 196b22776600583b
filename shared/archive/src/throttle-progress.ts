/** How far a download is; `totalBytes` is known only when the source says. */
export interface DownloadProgress {
  receivedBytes: number;
  totalBytes?: number;
}

/** Reports progress at most every {@link ThrottleProgressOptions.intervalMs}, then once at the end. */
export interface ProgressThrottle {
  report(receivedBytes: number): void;
  finish(receivedBytes: number): void;
}

/** Options for {@link throttleProgress}; the clock is replaceable for tests. */
export interface ThrottleProgressOptions {
  intervalMs?: number;
  now?: () => number;
}

/**
 * Wraps an `onProgress` callback so a fast download calls it about ten times a
 * second, not once per network chunk: each call becomes an operation event
 * on the API, and thousands a second would flood the event stream.
 */
export function throttleProgress(
  onProgress: ((progress: DownloadProgress) => void) | undefined,
  totalBytes: number | undefined,
  options: ThrottleProgressOptions = {},
): ProgressThrottle {
  const intervalMs = options.intervalMs ?? 100;
  const now = options.now ?? (() => performance.now());
  let lastAt: number | undefined;
  const emit = (receivedBytes: number): void => {
    onProgress?.(totalBytes === undefined ? { receivedBytes } : { receivedBytes, totalBytes });
  };
  return {
    report(receivedBytes) {
      const at = now();
      if (lastAt !== undefined && at - lastAt < intervalMs) return;
      lastAt = at;
      emit(receivedBytes);
    },
    finish: emit,
  };
}
