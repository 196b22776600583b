import type { AzureAuthSetting } from '@aks-flex-node/azure-credential';
import { AgentError } from '@aks-flex-node/log';

/**
 * The login methods kubelogin's `AAD_LOGIN_METHOD` names that the Go agent
 * writes into the kubelet's kubeconfig (spn, msi) or kubelogin offers
 * non-interactively (workloadidentity). The interactive ones (devicecode,
 * azurecli, …) have no place on a node.
 */
const loginMethods = ['spn', 'msi', 'workloadidentity'] as const;

/**
 * The auth setting kubelogin's environment describes, as `kubelogin
 * get-token` reads it: the client id from `AAD_SERVICE_PRINCIPAL_CLIENT_ID`
 * or `AZURE_CLIENT_ID`, the secret from `AAD_SERVICE_PRINCIPAL_CLIENT_SECRET`
 * or `AZURE_CLIENT_SECRET`, the certificate from `--client-certificate-file`,
 * `AAD_SERVICE_PRINCIPAL_CLIENT_CERTIFICATE` or `AZURE_CLIENT_CERTIFICATE_PATH`,
 * the tenant from `AZURE_TENANT_ID`, the federated token from
 * `AZURE_FEDERATED_TOKEN_FILE`. Throws INVALID_ARGUMENT naming what is missing.
 */
export function settingFromKubeloginEnv(
  env: NodeJS.ProcessEnv,
  clientCertificateFile: string | undefined,
): AzureAuthSetting {
  const method = (env.AAD_LOGIN_METHOD ?? '').trim().toLowerCase();
  const pick = (...names: string[]): string | undefined =>
    names.map((name) => env[name]?.trim()).find((value) => value !== undefined && value !== '');
  const need = (what: string, ...names: string[]): string => {
    const value = pick(...names);
    if (value === undefined) throw missing(method, what, names);
    return value;
  };
  switch (method) {
    case 'spn': {
      const tenantId = need('the tenant', 'AZURE_TENANT_ID');
      const clientId = need('the client id', 'AAD_SERVICE_PRINCIPAL_CLIENT_ID', 'AZURE_CLIENT_ID');
      const certificateFile =
        clientCertificateFile ??
        pick('AAD_SERVICE_PRINCIPAL_CLIENT_CERTIFICATE', 'AZURE_CLIENT_CERTIFICATE_PATH');
      if (certificateFile !== undefined) {
        return { kind: 'service-principal-certificate', tenantId, clientId, certificateFile };
      }
      const secret = need(
        'the client secret',
        'AAD_SERVICE_PRINCIPAL_CLIENT_SECRET',
        'AZURE_CLIENT_SECRET',
      );
      return { kind: 'service-principal-secret', tenantId, clientId, secret: { value: secret } };
    }
    case 'msi': {
      const clientId = pick('AZURE_CLIENT_ID');
      return clientId === undefined
        ? { kind: 'managed-identity' }
        : { kind: 'managed-identity', clientId };
    }
    case 'workloadidentity':
      return {
        kind: 'workload-identity',
        tenantId: need('the tenant', 'AZURE_TENANT_ID'),
        clientId: need('the client id', 'AZURE_CLIENT_ID', 'AAD_SERVICE_PRINCIPAL_CLIENT_ID'),
        tokenFile: need('the federated token file', 'AZURE_FEDERATED_TOKEN_FILE'),
      };
    default:
      throw new AgentError(
        'INVALID_ARGUMENT',
        method === ''
          ? 'token kubelogin: AAD_LOGIN_METHOD is not set'
          : `token kubelogin: login method "${method}" (AAD_LOGIN_METHOD) is not one a node uses`,
        {
          hint: `set AAD_LOGIN_METHOD to ${loginMethods.join(', ')} in the kubeconfig's exec env, as the agent writes the kubelet's`,
        },
      );
  }
}

function missing(method: string, what: string, names: string[]): AgentError {
  return new AgentError(
    'INVALID_ARGUMENT',
    `token kubelogin: login method ${method} needs ${what} (${names.join(' or ')})`,
    { hint: `set ${names[0] ?? ''} in the kubeconfig's exec env` },
  );
}
