import { hostPaths, unitNames } from './paths.js';

/** Where the latest release's archives are downloaded from. */
export const latestReleaseUrl = 'https://github.com/Azure/AKSFlexNode/releases/latest/download';

/**
 * What an operator runs, as printed, when no agent binary on the host runs
 * (both slots broken): download the latest release into the agent's
 * root-only state directory, activate its binary directly (with no daemon
 * answering, `agent-upgrade` installs the running binary into a slot and
 * switches `current` to it), then start the agent again, clearing the start
 * limit its failures used up. Its socket too: systemd fails the socket with
 * a service that hit its start limit, and starting the service does not
 * start it again (test/e2e/docs-run.test.ts runs this command as printed). The recovery shim prints the same command
 * (`arch` from `uname -m`); a unit test compares the two. The binary is
 * extracted owned by root and without the archive's group or world write
 * bits, or the activation would refuse it as a candidate another user could
 * have written.
 */
export function reinstallCommand(arch: 'amd64' | 'arm64', baseUrl = latestReleaseUrl): string {
  const member = `aks-flex-node-linux-${arch}`;
  const archive = `${hostPaths.stateDir}/${member}.tar.gz`;
  return [
    `curl -fsSL --create-dirs -o ${archive} ${baseUrl}/${member}.tar.gz`,
    `tar --no-same-owner --no-same-permissions -xzf ${archive} -C ${hostPaths.stateDir}`,
    `${hostPaths.stateDir}/${member} agent-upgrade`,
    `systemctl reset-failed ${unitNames.agentSocket} ${unitNames.agent}`,
    `systemctl start ${unitNames.agentSocket}`,
    `systemctl restart ${unitNames.agent}`,
  ].join(' && ');
}
