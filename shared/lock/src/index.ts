export {
  acquireActivationLock,
  isActivationLockHeld,
  retryWhileActivationBusy,
  withActivationLock,
} from './activation-lock.js';
export { holdSingleInstance } from './single-instance.js';
export type { SingleInstanceGuard } from './single-instance.js';
export { pollUntil } from './poll-until.js';
