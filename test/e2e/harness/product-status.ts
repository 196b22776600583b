import { statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import type { Host } from './host.js';
import { readProductStatus } from './product.js';

/** `aks-flex-node status --json` on the host, parsed by the API's own schema. */
export async function productStatus(host: Host): Promise<StatusResponse> {
  return statusResponseSchema.parse(await readProductStatus(host));
}

/**
 * Polls the product's status once a second until `accept` holds; throws
 * with the last status (or error) seen when `timeoutMs` passes first.
 */
export async function waitForProductStatus(
  host: Host,
  accept: (status: StatusResponse) => boolean,
  timeoutMs: number,
): Promise<StatusResponse> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const seen = await productStatus(host);
      if (accept(seen)) return seen;
      last = seen;
    } catch (error) {
      last = error instanceof Error ? error.message : error;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`status never matched on ${host.name}; last: ${JSON.stringify(last)}`);
}

/**
 * Waits until the daemon's start sequence has run: its gate open and no
 * activation holding the lock. `start`, a restart or a rollback returns once
 * the daemon answers; the sequence (judging an upgrade, the host-root move
 * with its restart) takes the activation lock about 3 s later, and a reset
 * asked for meanwhile is refused by design (exit 4, "wait for it to finish").
 * A CI run lost that race on a plain host, whose move copies the binary.
 */
export function waitForStartSequence(host: Host, timeoutMs = 120_000): Promise<StatusResponse> {
  return waitForProductStatus(
    host,
    (status) => status.startup.gate === 'open' && !status.activationInProgress,
    timeoutMs,
  );
}
