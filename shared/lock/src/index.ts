export {
  acquireActivationLock,
  isActivationLockHeld,
  retryWhileActivationBusy,
  withActivationLock,
} from './activation-lock.js';
export { holdSingleInstance } from './single-instance.js';
export type { SingleInstanceGuard } from './single-instance.js';
export type { ActivationLock, RetryWhileBusyOptions } from './activation-lock.js';
export type { ActivationLockOptions } from './activation-lock-options.js';
export { tryFlock } from './flock.js';
export type { FlockHandle } from './flock.js';
