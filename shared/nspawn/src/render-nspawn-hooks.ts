import { fillTemplate, type ServiceAsset } from '@aks-flex-node/agentbinary';
import type { HostPaths, NspawnMachine } from '@aks-flex-node/layout';
import { nspawnHookTemplates } from '@aks-flex-node/units';
import { nspawnHookFiles } from './nspawn-hook-files.js';

/**
 * One machine's hooks naming `helper` (an absolute path under the resolved
 * host root), in the order they are written: the regenerate-config unit
 * before the override that pulls it in, so an interrupted write never leaves
 * the machine's unit wanting a unit that is not there.
 */
export function renderNspawnHooks(
  paths: Pick<HostPaths, 'unitDir'>,
  machine: NspawnMachine,
  helper: string,
): ServiceAsset[] {
  const files = nspawnHookFiles(paths, machine);
  const fields = { machine, helper };
  return [
    {
      path: files.regenerateConfigUnit,
      content: fillTemplate(
        'unbounded-agent-regenerate-config@.service',
        nspawnHookTemplates.regenerateConfig,
        fields,
      ),
      mode: 0o644,
    },
    {
      path: files.overrideFile,
      content: fillTemplate(
        'systemd-nspawn-override.conf',
        nspawnHookTemplates.machineOverride,
        fields,
      ),
      mode: 0o644,
    },
  ];
}
