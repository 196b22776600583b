import { statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import type { Host } from './host.js';
import { parseJsonOutput, readProductStatus } from './product.js';
import { productPaths } from './product-names.js';
import { formatCommandResult } from './run-process.js';

/** `aks-flex-node status --json` on the host, parsed by the API's own schema. */
export async function productStatus(host: Host): Promise<StatusResponse> {
  return statusResponseSchema.parse(await readProductStatus(host));
}

/**
 * The daemon's `GET /v1/status` answer, asked on its socket with the host's
 * curl, parsed by the API's own schema. The CLI's `status --json` prints this
 * same answer; the waits below ask this way because a look through the CLI
 * starts the 135 MB executable and its unit watch (about 0.2 s of CPU) on the
 * host whose daemon is being waited for, and a suite waits this way about a
 * hundred times. The CLI's status is read by {@link productStatus} and by the
 * docs and walkthrough scenarios.
 */
async function daemonStatus(host: Host): Promise<StatusResponse> {
  const argv = [
    'curl',
    '-sS',
    '--fail',
    '--max-time',
    '10',
    '--unix-socket',
    productPaths.socket,
    'http://agent/v1/status',
  ];
  const result = await host.run(argv, { timeoutMs: 20_000 });
  if (result.exitCode !== 0) {
    throw new Error(`no status answer\n${formatCommandResult(argv.join(' '), result)}`);
  }
  return statusResponseSchema.parse(parseJsonOutput(result, 'GET /v1/status'));
}

/**
 * Asks the daemon for its status twice a second until `accept` holds;
 * throws with the last status (or error) seen when `timeoutMs` passes first.
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
      const seen = await daemonStatus(host);
      if (accept(seen)) return seen;
      last = seen;
    } catch (error) {
      last = error instanceof Error ? error.message : error;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
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
