import { z } from 'zod';
import { allErrorCodes } from '@aks-flex-node/log';

/** The media type of every error body (RFC 9457). */
export const problemContentType = 'application/problem+json';

/** A stable error code, as problem bodies and operation records carry it. */
export const errorCodeSchema = z.enum(allErrorCodes);

/** An error body: RFC 9457 fields plus the stable code, the path and the operator's hint. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: errorCodeSchema,
  path: z.string().optional(),
  hint: z.string().optional(),
});
export type Problem = z.infer<typeof problemSchema>;
