import { describe, expect, it } from 'vitest';
import { isAgentError } from '@aks-flex-node/log';
import { defaultEndpoints, endpointsFromEnv } from './endpoints.js';

const dir = '/var/opt/azcmagent/tokens';

describe('endpointsFromEnv', () => {
  it('issue23 with nothing set, the public cloud and the link-local IMDS (plain http by design)', () => {
    expect(endpointsFromEnv({}, dir)).toEqual({
      ...defaultEndpoints,
      arcChallengeDir: dir,
      allowInsecure: false,
    });
  });

  it('issue23 an https authority host is taken, without its trailing slash', () => {
    const env = { AKS_FLEX_NODE_AUTHORITY_HOST: 'https://login.chinacloudapi.cn/' };
    expect(endpointsFromEnv(env, dir).authorityHost).toBe('https://login.chinacloudapi.cn');
  });

  it.each([
    ['AKS_FLEX_NODE_AUTHORITY_HOST', 'http://127.0.0.1:8443'],
    ['AKS_FLEX_NODE_IMDS_ENDPOINT', 'http://127.0.0.1:8080/metadata/identity/oauth2/token'],
    ['IDENTITY_ENDPOINT', 'http://127.0.0.1:40343/metadata/identity/oauth2/token'],
  ])(
    'issue23 plain http in %s is refused unless the insecure-test switch is on',
    (variable, value) => {
      let error: unknown;
      try {
        endpointsFromEnv({ [variable]: value }, dir);
      } catch (thrown) {
        error = thrown;
      }
      expect(isAgentError(error, 'INVALID_ARGUMENT')).toBe(true);
      expect((error as Error).message).toContain(`${variable} is http, not https`);
      for (const on of ['true', '1', 'YES', 'y']) {
        const env = { [variable]: value, AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS: on };
        expect(Object.values(endpointsFromEnv(env, dir))).toContain(value);
      }
    },
  );

  it('issue23 a value that is not a URL names the variable', () => {
    expect(() => endpointsFromEnv({ AKS_FLEX_NODE_IMDS_ENDPOINT: 'not a url' }, dir)).toThrow(
      'AKS_FLEX_NODE_IMDS_ENDPOINT is not a URL: not a url',
    );
  });
});
