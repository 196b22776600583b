import { z } from 'zod';

/**
 * `POST /v1/reset`: no options. Reset reads no config, so there is nothing a
 * caller could choose; an unknown field is refused like everywhere else.
 */
export const resetRequestSchema = z.strictObject({});
export type ResetRequest = z.infer<typeof resetRequestSchema>;
