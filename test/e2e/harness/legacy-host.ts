import type { Host } from './host.js';
import { goScriptConfig } from './go-script-config.js';
import { layOutFixture } from './lay-out-fixture.js';
import {
  earlierReleaseHooks,
  legacyHelper,
  standInMachineTemplate,
  units,
} from './nspawn-stand-in.js';
import { productBinary } from './product.js';
import { runOrThrow } from './run-or-throw.js';
import { copyIn } from './write-host-file.js';

/** Where a release before the host root kept its blue/green layout. */
export const legacyLib = '/usr/local/lib/aks-flex-node';

// The earlier release, as far as this host can tell: it answers `version`
// without --json or a host-root capability, and as a daemon it just runs.
const standIn = `#!/bin/sh
case "$1" in
  version) echo "aks-flex-node v0.9.0" ;;
  agent|daemon) exec sleep infinity ;;
  *) echo "unknown command $1" >&2; exit 1 ;;
esac
`;

// The units the earlier release wrote, naming /usr/local.
export const olderAgentUnit = `[Unit]
Description=AKS Flex Node Agent
After=network-online.target
OnFailure=aks-flex-node-agent-recovery.service
StartLimitIntervalSec=300
StartLimitBurst=5

[Service]
Type=simple
ExecStart=${legacyLib}/aks-flex-node-current agent --config /etc/aks-flex-node/config.json
Restart=on-failure
RestartSec=30

[Install]
WantedBy=multi-user.target
`;
const olderRecoveryUnit = `[Unit]
Description=Recover AKS Flex Node Agent to last-known-good binary

[Service]
Type=oneshot
ExecStart=${legacyLib}/aks-flex-node-recovery.sh
`;

/**
 * Lays out a host as a release before the host root left it right after its
 * AgentUpgrade switched this build in: blue is the earlier release (a
 * stand-in, last-good), green this build (current), a regular copy in
 * /usr/local/bin as install scripts seed it, units naming /usr/local. Then
 * starts the agent unit, as that upgrade's restart would.
 */
export async function switchInOverLegacyRelease(host: Host): Promise<void> {
  await layOutFixture(host, {
    [`${legacyLib}/aks-flex-node-blue`]: { kind: 'file', content: standIn, mode: 0o755 },
    [`${legacyLib}/aks-flex-node-current`]: {
      kind: 'symlink',
      target: `${legacyLib}/aks-flex-node-green`,
    },
    [`${legacyLib}/aks-flex-node-last-good`]: {
      kind: 'symlink',
      target: `${legacyLib}/aks-flex-node-blue`,
    },
    // As the Go bootstrap.sh rendered it: the product must read it as written and keep it byte for byte.
    '/etc/aks-flex-node/config.json': { kind: 'file', content: goScriptConfig, mode: 0o600 },
    // The earlier release's nspawn helper (a copy of that release) and the
    // hooks it generated for kube1, naming it under /usr/local; the machine's
    // own unit is a stand-in (a nested container cannot boot here).
    [legacyHelper]: { kind: 'file', content: standIn, mode: 0o755 },
    [`${units}/unbounded-agent-regenerate-config@kube1.service`]: {
      kind: 'file',
      content: earlierReleaseHooks.unit,
    },
    [`${units}/systemd-nspawn@kube1.service.d/override.conf`]: {
      kind: 'file',
      content: earlierReleaseHooks.override,
    },
    [`${units}/systemd-nspawn@.service`]: { kind: 'file', content: standInMachineTemplate },
    '/etc/systemd/system/aks-flex-node-agent.service': { kind: 'file', content: olderAgentUnit },
    '/etc/systemd/system/aks-flex-node-agent-recovery.service': {
      kind: 'file',
      content: olderRecoveryUnit,
    },
  });
  await copyIn(host, productBinary, `${legacyLib}/aks-flex-node-green`, 0o755);
  await copyIn(host, productBinary, '/usr/local/bin/aks-flex-node', 0o755);
  await runOrThrow(host, ['systemctl', 'daemon-reload']);
  await runOrThrow(host, ['systemctl', 'enable', '--now', 'aks-flex-node-agent.service']);
}
