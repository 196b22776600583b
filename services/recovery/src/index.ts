import recoveryScript from './aks-flex-node-recovery.sh?raw';

/**
 * The recovery shim as shipped. It names the legacy root's paths; the asset
 * writer replaces these literals with the host root's, so they must appear in
 * the script exactly as written here (a test pins that).
 */
export const recoveryScriptTemplate: string = recoveryScript;
export const recoveryScriptLiterals = {
  lastGood: '/usr/local/lib/aks-flex-node/aks-flex-node-last-good',
  signal: '/etc/aks-flex-node/agent-upgrade-signal.json',
} as const;
