import type { ActivationPlan } from '@aks-flex-node/api';
import { plannedHostRoot, refuseUnfinishedMove } from '@aks-flex-node/hostroot';
import { hostRootMarkers, type HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import { createFileInspector } from './activation-inspector.js';
import { createFlexActivationService } from './flex-activation-service.js';
import { planActivation } from './plan-activation.js';
import type { ServiceHost } from './service-host.js';
import {
  hostCandidateTrust,
  openTrustedCandidate,
  type CandidateTrust,
} from '../upgrade/candidate-source.js';

/** What {@link preflightCandidate} needs. */
export interface PreflightCandidateOptions {
  paths: HostPaths;
  candidatePath: string;
  host: ServiceHost;
  log: Logger;
  /** Who may have written the candidate; the host's rule unless a test narrows it. */
  trust?: CandidateTrust;
}

/**
 * Plans a direct activation and changes nothing (spec agentbinary §3.6.4):
 * no migration, no lock file, no directory. It plans against the root the
 * host *will* resolve to once an activation has migrated it, so a host an
 * earlier release installed is planned where its files really are.
 *
 * A candidate the activation would refuse as untrusted is refused here
 * too, so a plan never promises an activation that cannot happen.
 *
 * Throws what planActivation throws, UPGRADE_REFUSED (an untrusted
 * candidate) and HOST_ROOT_REFUSED during a move.
 */
export async function preflightCandidate(
  options: PreflightCandidateOptions,
): Promise<ActivationPlan> {
  const { paths, log } = options;
  const candidate = await openTrustedCandidate(
    options.candidatePath,
    options.trust ?? hostCandidateTrust,
  );
  await candidate.handle.close();
  await refuseUnfinishedMove(paths);
  const binaryPaths = agentBinaryPathsUnder(await plannedHostRoot(paths, hostRootMarkers()));
  const service = createFlexActivationService({ paths, binaryPaths, host: options.host, log });
  return planActivation(
    { layout: binaryPaths, candidatePath: options.candidatePath },
    { ...createFileInspector(), servicePlan: () => service.preflight() },
  );
}
