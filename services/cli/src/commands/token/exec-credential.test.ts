import { describe, expect, it } from 'vitest';
import { isAgentError } from '@aks-flex-node/log';
import { formatExecCredential, readExecCredentialRequest } from './exec-credential.js';

const v1 = 'client.authentication.k8s.io/v1';
const v1beta1 = 'client.authentication.k8s.io/v1beta1';

describe('KUBERNETES_EXEC_INFO and the ExecCredential', () => {
  it.each([
    ['unset: v1, as the Go command answers by hand', {}, v1],
    [
      'v1',
      {
        KUBERNETES_EXEC_INFO: JSON.stringify({
          apiVersion: v1,
          kind: 'ExecCredential',
          spec: { interactive: false },
        }),
      },
      v1,
    ],
    [
      'v1beta1 (kubectl 1.20)',
      {
        KUBERNETES_EXEC_INFO: JSON.stringify({
          apiVersion: v1beta1,
          kind: 'ExecCredential',
          spec: {},
        }),
      },
      v1beta1,
    ],
  ])('issue23 %s', (_case, env, version) => {
    expect(readExecCredentialRequest(env).apiVersion).toBe(version);
  });

  it.each([
    ['not JSON', '{', 'is not JSON'],
    [
      'another kind',
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod' }),
      'is not a client.authentication.k8s.io ExecCredential',
    ],
    [
      'v1alpha1, which client-go dropped',
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1alpha1',
        kind: 'ExecCredential',
      }),
      'asks for client.authentication.k8s.io/v1alpha1',
    ],
  ])('issue23 a request that is %s is INVALID_ARGUMENT', (_case, text, message) => {
    let error: unknown;
    try {
      readExecCredentialRequest({ KUBERNETES_EXEC_INFO: text });
    } catch (thrown) {
      error = thrown;
    }
    expect(isAgentError(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toContain(message);
  });

  it('issue23 the answer is the Go shape: kind, apiVersion, spec, status with RFC 3339 whole-second expiry, two-space indent', () => {
    const text = formatExecCredential(
      { apiVersion: v1beta1, interactive: false },
      'tok',
      Date.UTC(2026, 11, 3, 17, 0, 0, 999),
    );
    expect(text).toBe(
      `{\n  "kind": "ExecCredential",\n  "apiVersion": "${v1beta1}",\n  "spec": {\n    "interactive": false\n  },\n  "status": {\n    "expirationTimestamp": "2026-12-03T17:00:00Z",\n    "token": "tok"\n  }\n}\n`,
    );
  });
});
