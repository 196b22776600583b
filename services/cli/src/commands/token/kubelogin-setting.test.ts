import { describe, expect, it } from 'vitest';
import { settingFromKubeloginEnv } from './kubelogin-setting.js';
import { checkPopFlags } from './pop-flags.js';

describe("token kubelogin's environment, as the Go agent writes it into the kubelet's kubeconfig", () => {
  it.each([
    [
      'spn with a secret',
      {
        AAD_LOGIN_METHOD: 'spn',
        AZURE_TENANT_ID: 't',
        AAD_SERVICE_PRINCIPAL_CLIENT_ID: 'c',
        AAD_SERVICE_PRINCIPAL_CLIENT_SECRET: 's',
      },
      undefined,
      { kind: 'service-principal-secret', tenantId: 't', clientId: 'c', secret: { value: 's' } },
    ],
    [
      'spn with --client-certificate-file',
      { AAD_LOGIN_METHOD: 'spn', AZURE_TENANT_ID: 't', AAD_SERVICE_PRINCIPAL_CLIENT_ID: 'c' },
      '/etc/cert',
      {
        kind: 'service-principal-certificate',
        tenantId: 't',
        clientId: 'c',
        certificateFile: '/etc/cert',
      },
    ],
    [
      "spn with kubelogin's AZURE_ names",
      {
        AAD_LOGIN_METHOD: 'SPN',
        AZURE_TENANT_ID: 't',
        AZURE_CLIENT_ID: 'c',
        AZURE_CLIENT_CERTIFICATE_PATH: '/c.pfx',
      },
      undefined,
      {
        kind: 'service-principal-certificate',
        tenantId: 't',
        clientId: 'c',
        certificateFile: '/c.pfx',
      },
    ],
    ['msi', { AAD_LOGIN_METHOD: 'msi' }, undefined, { kind: 'managed-identity' }],
    [
      'msi user-assigned',
      { AAD_LOGIN_METHOD: 'msi', AZURE_CLIENT_ID: 'm' },
      undefined,
      { kind: 'managed-identity', clientId: 'm' },
    ],
    [
      'workloadidentity',
      {
        AAD_LOGIN_METHOD: 'workloadidentity',
        AZURE_TENANT_ID: 't',
        AZURE_CLIENT_ID: 'c',
        AZURE_FEDERATED_TOKEN_FILE: '/f',
      },
      undefined,
      { kind: 'workload-identity', tenantId: 't', clientId: 'c', tokenFile: '/f' },
    ],
  ])('issue23 %s', (_case, env, certificate, setting) => {
    expect(settingFromKubeloginEnv(env, certificate)).toEqual(setting);
  });

  it.each([
    [{}, 'AAD_LOGIN_METHOD is not set'],
    [
      { AAD_LOGIN_METHOD: 'devicecode' },
      'login method "devicecode" (AAD_LOGIN_METHOD) is not one a node uses',
    ],
    [
      { AAD_LOGIN_METHOD: 'spn', AZURE_TENANT_ID: 't', AZURE_CLIENT_ID: 'c' },
      'needs the client secret (AAD_SERVICE_PRINCIPAL_CLIENT_SECRET or AZURE_CLIENT_SECRET)',
    ],
    [
      { AAD_LOGIN_METHOD: 'spn', AAD_SERVICE_PRINCIPAL_CLIENT_ID: 'c' },
      'needs the tenant (AZURE_TENANT_ID)',
    ],
  ])('issue23 %j is refused: %s', (env, message) => {
    expect(() => settingFromKubeloginEnv(env, undefined)).toThrow(message);
  });

  it.each([
    [false, undefined, undefined],
    [false, 'u=/x', '--pop-claims is given without --pop-enabled'],
    [true, undefined, 'needs --pop-claims with u='],
    [true, 'u', 'not key=value'],
    [
      true,
      'u=/subscriptions/s/resourceGroups/r',
      '--pop-enabled: proof-of-possession (PoP) tokens are not supported; this release issues bearer tokens only',
    ],
  ])('issue23 PoP flags enabled=%s claims=%s', (enabled, claims, message) => {
    if (message === undefined)
      expect(() => {
        checkPopFlags(enabled, claims);
      }).not.toThrow();
    else
      expect(() => {
        checkPopFlags(enabled, claims);
      }).toThrow(message);
  });
});
