/**
 * How the node proves who it is to Entra ID: one of the login methods the Go
 * agent configures (config `azure.servicePrincipal`, `azure.managedIdentity`,
 * `azure.arc`, and kubelogin's workload identity).
 */
export type AzureAuthSetting =
  | ServicePrincipalSecretSetting
  | ServicePrincipalCertificateSetting
  | ManagedIdentitySetting
  | ArcIdentitySetting
  | WorkloadIdentitySetting;

/** A service principal with a client secret, inline or in a file. */
export interface ServicePrincipalSecretSetting {
  kind: 'service-principal-secret';
  tenantId: string;
  clientId: string;
  /** A file holding the secret (trailing newline ignored), or the secret itself. */
  secret: { file: string } | { value: string };
}

/** A service principal with a certificate: PEM by content, or unencrypted PKCS#12 named `.pfx`. */
export interface ServicePrincipalCertificateSetting {
  kind: 'service-principal-certificate';
  tenantId: string;
  clientId: string;
  certificateFile: string;
}

/** The VM's managed identity through IMDS; a client id picks a user-assigned one. */
export interface ManagedIdentitySetting {
  kind: 'managed-identity';
  clientId?: string;
}

/** The Arc-connected machine's identity, through the local HIMDS endpoint and its challenge file. */
export interface ArcIdentitySetting {
  kind: 'arc';
}

/** A federated token in a file, exchanged at Entra ID (workload identity). */
export interface WorkloadIdentitySetting {
  kind: 'workload-identity';
  tenantId: string;
  clientId: string;
  tokenFile: string;
}

/** The name of a setting's login method, as errors and logs print it. */
export function authModeName(setting: AzureAuthSetting): string {
  switch (setting.kind) {
    case 'service-principal-secret':
      return 'service principal (client secret)';
    case 'service-principal-certificate':
      return 'service principal (client certificate)';
    case 'managed-identity':
      return setting.clientId === undefined
        ? 'managed identity (system-assigned)'
        : 'managed identity (user-assigned)';
    case 'arc':
      return 'Azure Arc managed identity';
    case 'workload-identity':
      return 'workload identity';
    default: {
      const unhandled: never = setting;
      throw new Error(`unknown auth setting ${JSON.stringify(unhandled)}`);
    }
  }
}
