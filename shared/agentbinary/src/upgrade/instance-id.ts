import { randomBytes } from 'node:crypto';

/**
 * This process's daemon instance id: 16 random bytes in hex, new for every
 * process. The daemon that writes a signal must not judge it; the restarted
 * one, with another id, does.
 */
export const daemonInstanceId: string = randomBytes(16).toString('hex');
