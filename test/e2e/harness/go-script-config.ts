// The config the Go releases' bootstrap.sh renders (spec/scripts.md 3.6), for
// scenarios that take over a host one of them set up. Real-shaped on purpose:
// the product must keep every field it does not know.
/** A config as the Go bootstrap.sh renders it: MSI auth, a target cluster, labels, the agent section. */
export const goScriptConfig = `${JSON.stringify(
  {
    azure: {
      tenantId: 'base-tenant',
      targetCluster: {
        resourceId:
          '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1',
      },
      targetAgentPoolName: 'aksflexnodes',
      resourceManagerEndpoint: 'https://management.azure.com',
      arc: { enabled: false },
      managedIdentity: { clientId: 'cli-msi' },
    },
    bootstrap: { ociImage: 'mcr.microsoft.com/aks/flex-node/bootstrap:1' },
    components: {},
    networking: {},
    labels: { base: 'true' },
    agent: { nodeName: 'e2e-node', logDir: '/var/log/aks-flex-node', logLevel: 'info' },
  },
  null,
  2,
)}\n`;
