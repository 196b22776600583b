export {
  acquireActivationLock,
  isActivationLockHeld,
  withActivationLock,
} from './activation-lock.js';
export type { ActivationLock, ActivationLockOptions } from './activation-lock.js';
