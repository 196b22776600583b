/**
 * A base config as the acl harness writes it (spec/scripts.md 5.5): a
 * bootstrap token, the target cluster and the agent's settings. The Ignition
 * tests, the rendering check and the real-systemd first boot, provision it,
 * so both read it from here.
 */
export const aclBaseConfig = {
  azure: {
    bootstrapToken: { token: 'abcdef.0123456789abcdef' },
    targetCluster: {
      resourceId:
        '/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/c',
      location: 'westeurope',
    },
  },
  agent: { nodeName: 'acl-node', requireMachineRegistration: true },
  components: { kubernetes: '1.35.6' },
  networking: { dnsServiceIP: '10.0.0.10', localDNS: { mode: 'Required' } },
};
