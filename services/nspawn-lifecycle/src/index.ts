/** The nspawn machines' hook client: `aks-flex-node nspawn-lifecycle PHASE MACHINE`. */
export { preStartTimeoutMs, runNspawnLifecycle } from './run-nspawn-lifecycle.js';
export type { NspawnLifecycleOptions } from './run-nspawn-lifecycle.js';
