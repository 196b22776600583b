import path from 'node:path';
import type { ActivationServicePlan } from '@aks-flex-node/api';
import { exists } from '@aks-flex-node/fs';
import { unitNames, type HostPaths } from '@aks-flex-node/layout';
import { AgentError, type Logger } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import {
  serviceAssetsForHost,
  serviceAssetsDiffer,
  writeServiceAssets,
} from '../install/service-assets.js';
import { resolveIfPresent } from '../resolve-link.js';
import type { ActivationService } from './activation-service.js';
import type { ServiceHost } from './service-host.js';
import { waitForExecutable } from './wait-for-executable.js';

/** What {@link createFlexActivationService} needs. */
export interface FlexActivationServiceOptions {
  paths: HostPaths;
  /** The layout the activation changes; the units are rendered for it. */
  binaryPaths: AgentBinaryPaths;
  host: ServiceHost;
  log: Logger;
}

/**
 * The agent unit as a direct activation drives it (spec agentbinary §3.6.3).
 * A host where the unit is not installed (the agent run by hand, or after a
 * reset that kept the layout) gets the file switch only: nothing is written,
 * reloaded or restarted there, and no systemd is needed.
 */
export function createFlexActivationService(
  options: FlexActivationServiceOptions,
): ActivationService {
  const { paths, host, log } = options;
  const unit = unitNames.agent;
  const assets = () => serviceAssetsForHost(paths, options.binaryPaths);
  return {
    preflight: async () => {
      await refuseActivationDuringUpgrade(paths.signalFile);
      if (!(await exists(path.join(paths.unitDir, unit)))) {
        return { installed: false, wasActive: false, updateRequired: false };
      }
      return {
        installed: true,
        wasActive: isActive(unit, await host.systemctl.unitState(unit)),
        updateRequired: await serviceAssetsDiffer(await assets()),
      };
    },
    runningExecutable: async (plan) => {
      if (!plan.installed) return undefined;
      const pid = await host.systemctl.mainPid(unit);
      if (pid <= 0) return undefined;
      // The process can exit between the two reads; then nothing runs.
      return host.processExecutable(pid).catch(() => undefined);
    },
    prepare: async (plan) => {
      if (plan.installed && plan.updateRequired) await writeServiceAssets(await assets(), log);
    },
    reload: async (plan) => {
      if (plan.installed) await host.systemctl.daemonReload();
    },
    restart: async (plan, signal) => restartIfActive(options, plan, signal),
    waitHealthy: async (plan, expected, signal) => {
      // An inactive service was left stopped on purpose: there is nothing to wait for.
      if (!plan.wasActive) return;
      const resolved = (await resolveIfPresent(expected)) ?? expected;
      await waitForExecutable({ unit, expected: resolved, host, signal });
    },
  };
}

/**
 * Rationale §8.16: an inactive service stays stopped (the reset/reinstall
 * case). A planned restart still counts toward the start limit, so the
 * failure counter is cleared first, best effort (SELinux may deny it).
 */
async function restartIfActive(
  options: FlexActivationServiceOptions,
  plan: ActivationServicePlan,
  signal: AbortSignal,
): Promise<void> {
  const { host, log } = options;
  if (!plan.wasActive) {
    log.info({ unit: unitNames.agent }, 'the agent service was not active; leaving it stopped');
    return;
  }
  signal.throwIfAborted();
  await host.systemctl.resetFailed(unitNames.agent).catch((error: unknown) => {
    log.warn({ err: error }, 'could not reset the agent unit; restarting anyway');
  });
  await host.systemctl.restart(unitNames.agent);
}

function isActive(unit: string, state: { loadState: string; activeState: string }): boolean {
  if (state.loadState === 'not-found') return false;
  switch (state.activeState) {
    case 'inactive':
      return false;
    case 'active':
    case 'activating':
    case 'reloading':
    case 'deactivating':
    case 'failed':
      return true;
    default:
      throw new AgentError(
        'SYSTEMD_FAILED',
        `${unit} is in an unknown state ${JSON.stringify(state.activeState)}`,
        { hint: `check it with \`systemctl status ${unit}\`` },
      );
  }
}

/**
 * The signal covers the window between an AgentUpgrade's switch and the new
 * daemon judging it; activating then would race the recovery that may still
 * roll `current` back.
 */
async function refuseActivationDuringUpgrade(signalFile: string): Promise<void> {
  if (!(await exists(signalFile))) return;
  throw new AgentError(
    'ACTIVATION_IN_PROGRESS',
    `AgentUpgrade MachineOperation signal exists at ${signalFile}`,
    {
      path: signalFile,
      hint: 'start the agent so it judges the pending AgentUpgrade (or let the recovery unit finish), then retry',
    },
  );
}
