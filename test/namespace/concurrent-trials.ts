/**
 * How many crash trials a namespace file runs at once: vitest's
 * maxConcurrency (the tests marked concurrent, vitest.namespace.config.ts)
 * and the lanes of mapConcurrently (private-host.ts) both take it from here, so
 * the two kinds of crash file cannot drift apart. A trial is mostly waiting
 * on a stale lockfile or a stability interval, so two overlap well; more
 * starve the daemons' own time bounds on a 2-core machine with another file
 * (and the e2e suite) running beside them.
 * AKS_FLEX_NODE_CONCURRENT_TRIALS overrides it while iterating.
 */
export const concurrentTrials = Number(process.env.AKS_FLEX_NODE_CONCURRENT_TRIALS ?? '2');
