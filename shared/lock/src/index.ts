export {
  acquireActivationLock,
  isActivationLockHeld,
  retryWhileActivationBusy,
  withActivationLock,
} from './activation-lock.js';
export { holdSingleInstance } from './single-instance.js';
export type { SingleInstanceGuard } from './single-instance.js';
export { pollUntil } from './poll-until.js';
export type { PollClock } from './poll-until.js';
export type {
  ActivationLock,
  ActivationLockOptions,
  RetryWhileBusyOptions,
} from './activation-lock.js';
export { tryFlock } from './flock.js';
export type { FlockHandle } from './flock.js';
