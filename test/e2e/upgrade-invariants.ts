// Assertions every AgentUpgrade scenario makes once the upgrade is over,
// whichever way it went.
import { expect } from 'vitest';
import type { Operation, OperationState, StatusResponse } from '@aks-flex-node/api';
import { statusResponseSchema } from '@aks-flex-node/api';
import type { Host, SlotLinks } from './harness/index.js';
import { readProductStatus, readSlotLinks, waitForUpgradeSettled } from './harness/index.js';

/** Asserts that `status` answers from a daemon running `executable` and reporting `version`. */
export async function expectServingFrom(
  host: Host,
  executable: string,
  version: string,
): Promise<StatusResponse> {
  const status = statusResponseSchema.parse(await readProductStatus(host));
  expect(status.daemon.executable).toBe(executable);
  expect(status.version.version).toBe(version);
  return status;
}

/**
 * Asserts that the AgentUpgrade is over: its record says `state`, the
 * signal is gone, and the links resolve as `links` says. Resolves to the record.
 */
export async function expectUpgradeSettled(
  host: Host,
  operationId: string,
  state: OperationState,
  links: SlotLinks,
): Promise<Operation> {
  const record = await waitForUpgradeSettled(host, operationId);
  expect(record.state).toBe(state);
  expect(record.finishedAt).toBeDefined();
  expect(await readSlotLinks(host)).toEqual(links);
  return record;
}

/** Seconds from `from` (an ISO time the product recorded) to `toMs` (ms since the epoch). */
export function secondsSince(from: string | undefined, toMs: number): number {
  expect(from, 'the recorded time').toBeDefined();
  return (toMs - Date.parse(from ?? '')) / 1000;
}
