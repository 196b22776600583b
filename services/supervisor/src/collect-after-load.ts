/**
 * Requests since the last collection before a quiet spell is worth a full
 * collection. 64 clients x 10/s send this many in 3 s; a poller every 10 s
 * reaches it after about 5.5 hours, so a lightly polled daemon is collected
 * rarely, and never for a handful of requests (one collection costs about as
 * much CPU as 2,000 status answers).
 */
export const collectAfterRequests = 2_000;

/**
 * How long without a request counts as the load having ended. Longer than the
 * gaps between a poller's bursts, so a collection does not pause a load that
 * is only breathing.
 */
export const loadQuietMs = 10_000;

/** What {@link collectAfterLoad} needs: the collection itself, and the two figures above. */
export interface CollectAfterLoadOptions {
  collect: () => void;
  afterRequests?: number;
  quietMs?: number;
}

/**
 * Runs one full garbage collection when a load has ended, so what the load
 * grew (the heap's garbage, V8's freed pages) goes back to the system instead
 * of staying for good: the memory reducer that would do this is off, since
 * its timer woke the idle daemon every 8 s (docs/performance.md).
 *
 * Driven by requests, not a periodic timer: below `afterRequests` requests
 * since the last collection nothing is armed. Past it, a one-shot timer checks
 * every `quietMs` whether a request came meanwhile; the first check that saw
 * none collects and arms nothing more. So an idle daemon never wakes for it,
 * and a loaded one wakes once per `quietMs`, which its requests dwarf.
 */
export function collectAfterLoad(options: CollectAfterLoadOptions): {
  /** Counts one answered request. */
  noteRequest: () => void;
  /** Disarms the check (the daemon is stopping). */
  stop: () => void;
} {
  const afterRequests = options.afterRequests ?? collectAfterRequests;
  const quietMs = options.quietMs ?? loadQuietMs;
  let requests = 0;
  let requestedSinceCheck = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const check = () => {
    if (requestedSinceCheck) {
      requestedSinceCheck = false;
      timer = setTimeout(check, quietMs).unref();
      return;
    }
    timer = undefined;
    requests = 0;
    options.collect();
  };

  return {
    noteRequest: () => {
      requests++;
      requestedSinceCheck = true;
      if (timer !== undefined || stopped || requests < afterRequests) return;
      requestedSinceCheck = false;
      // Unref'd: a pending check never holds the daemon's exit up.
      timer = setTimeout(check, quietMs).unref();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
