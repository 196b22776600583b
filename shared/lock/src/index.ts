export {
  acquireActivationLock,
  isActivationLockHeld,
  retryWhileActivationBusy,
  withActivationLock,
} from './activation-lock.js';
export type {
  ActivationLock,
  ActivationLockOptions,
  RetryWhileBusyOptions,
} from './activation-lock.js';
export { tryFlock } from './flock.js';
export type { FlockHandle } from './flock.js';
