import agentService from './aks-flex-node-agent.service?raw';
import goReleaseAgentService from './go-release-agent.service?raw';
import goReleaseRecoveryService from './go-release-agent-recovery.service?raw';
import agentSocket from './aks-flex-node-agent.socket?raw';
import recoveryService from './aks-flex-node-agent-recovery.service?raw';
import upgradeGuard from './aks-flex-node-upgrade-guard.service?raw';
import recoveryScript from './aks-flex-node-recovery.sh?raw';
import nspawnOverride from './systemd-nspawn-override.conf?raw';
import regenerateConfig from './unbounded-agent-regenerate-config@.service?raw';

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

/**
 * The agent and recovery units as the Go releases write them (their goldens
 * at 0f5f58c and the recovery asset at 7ebd2f9; spec agentbinary 5.1, 5.2),
 * with the same `{{field}}`s. A binary that is not this product (a Go
 * last-good, a Go candidate, a downgrade) runs under these, never under this
 * product's confinement: that release can write and reach what it always
 * could (/var/lib/machines, /usr/local, /dev).
 */
export const otherReleaseUnitTemplates = {
  'aks-flex-node-agent.service': goReleaseAgentService,
  'aks-flex-node-agent-recovery.service': goReleaseRecoveryService,
} as const;

/**
 * The recovery shim as shipped. It names the legacy root's paths; the asset
 * writer replaces these literals with the host root's, so they must appear in
 * the script exactly as written here (a test pins that).
 */
export const recoveryScriptTemplate: string = recoveryScript;
export const recoveryScriptLiterals = {
  lastGood: '/usr/local/lib/aks-flex-node/aks-flex-node-last-good',
  signal: '/etc/aks-flex-node/agent-upgrade-signal.json',
  agentUnitFile: '/etc/systemd/system/aks-flex-node-agent.service',
  /** One line, replaced by the whole agent unit another release expects. */
  otherReleaseAgentUnit: '@OTHER_RELEASE_AGENT_UNIT@\n',
} as const;

/**
 * The hooks of one nspawn machine, filled with `{{machine}}` and `{{helper}}`
 * (the lifecycle helper's absolute path under the resolved host root). The
 * regenerate-config unit runs pre-start before the machine; the override of
 * `systemd-nspawn@MACHINE.service` pulls it in and runs post-start.
 */
export const nspawnHookTemplates = {
  regenerateConfig,
  machineOverride: nspawnOverride,
} as const;
