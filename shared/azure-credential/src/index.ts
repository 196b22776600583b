export { authModeName } from './auth-setting.js';
export type {
  ArcIdentitySetting,
  AzureAuthSetting,
  ManagedIdentitySetting,
  ServicePrincipalCertificateSetting,
  ServicePrincipalSecretSetting,
  WorkloadIdentitySetting,
} from './auth-setting.js';
export { validateClientCertificateFile } from './client-certificate.js';
export { createAzureCredential } from './create-credential.js';
export { TokenServiceFailure } from './credential-failure.js';
export type { AzureCredential } from './create-credential.js';
export { defaultEndpoints, endpointEnv, endpointsFromEnv, withoutQuery } from './endpoints.js';
export type { CredentialEndpoints } from './endpoints.js';
export type { IssuedToken } from './token-response.js';
