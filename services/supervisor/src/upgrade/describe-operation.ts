import { readOperationRecord, readUpgradeSignalState } from '@aks-flex-node/agentbinary';
import type { Operation } from '@aks-flex-node/api';
import type { HostPaths } from '@aks-flex-node/layout';
import type { OperationRegistry } from './operation-registry.js';

/**
 * An operation as `GET /v1/operations/{id}` answers it: this process's own
 * while it runs, else its record once finished, else what the signal says of
 * one the daemon before a restart switched to.
 */
export async function describeOperation(
  paths: HostPaths,
  registry: OperationRegistry,
  id: string,
): Promise<Operation | undefined> {
  const running = registry.get(id);
  if (running !== undefined && running.state !== 'restarting') return running;
  const recorded = await readOperationRecord(paths.operationsDir, id);
  if (recorded !== undefined) return recorded;
  if (running !== undefined) return running;
  return describeSignalled(paths.signalFile, id);
}

/**
 * An operation the daemon before a restart switched to: only the signal
 * knows it until it is judged, so it reads as restarting, being judged.
 */
async function describeSignalled(signalFile: string, id: string): Promise<Operation | undefined> {
  // A corrupt signal names no operation it can be trusted for; the start sets it aside.
  const state = await readUpgradeSignalState(signalFile);
  if (state.kind !== 'pending') return undefined;
  const { signal } = state;
  if (signal.operationName !== id) return undefined;
  const inFlight: Operation = {
    id,
    kind: 'agent-upgrade',
    state: 'restarting',
    phase: 'judging',
    startedAt: signal.startedAt ?? '',
  };
  if (signal.sourceUrl !== undefined) inFlight.sourceUrl = signal.sourceUrl;
  return inFlight;
}
