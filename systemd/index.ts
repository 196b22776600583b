import agentService from './aks-flex-node-agent.service?raw';
import agentSocket from './aks-flex-node-agent.socket?raw';
import recoveryService from './aks-flex-node-agent-recovery.service?raw';
import upgradeGuard from './aks-flex-node-upgrade-guard.service?raw';

/**
 * The unit templates, embedded in the executable at build time. `{{name}}`
 * fields are filled by the asset writer; a golden test pins the output.
 */
export const unitTemplates = {
  'aks-flex-node-agent.service': agentService,
  'aks-flex-node-agent.socket': agentSocket,
  'aks-flex-node-agent-recovery.service': recoveryService,
  'aks-flex-node-upgrade-guard.service': upgradeGuard,
} as const;
