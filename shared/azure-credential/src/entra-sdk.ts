/**
 * The @azure/identity credentials the node signs in with, imported by name
 * so the bundle leaves out the rest (browser, device code, broker flows).
 * Loaded only when a token must come from Entra ID (entra-credential.ts).
 */
export {
  ClientCertificateCredential,
  ClientSecretCredential,
  WorkloadIdentityCredential,
} from '@azure/identity';
