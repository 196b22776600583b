import { describe, expect, it } from 'vitest';
import { describeUnknownConfigKey, findUnknownConfigKeys } from './unknown-keys.js';

describe('findUnknownConfigKeys (issue 24 item 7)', () => {
  it('names each misspelled key with the closest known one, at the top level, in agent and in azure', () => {
    expect(
      findUnknownConfigKeys({
        agent: { logLevl: 'debug', logDir: '/var/log/aks-flex-node' },
        azure: { subscriptonId: 'x', tenantId: 't' },
        azur: {},
        somethingElse: true,
      }),
    ).toEqual([
      { key: 'azur', closest: 'azure' },
      { key: 'somethingElse', closest: undefined },
      { key: 'agent.logLevl', closest: 'agent.logLevel' },
      { key: 'azure.subscriptonId', closest: 'azure.subscriptionId' },
    ]);
  });

  it("knows the Go releases' keys and leaves their deeper sections alone", () => {
    expect(
      findUnknownConfigKeys({
        agent: {
          logLevel: 'info',
          machineReconcileInterval: '5m',
          enableDriftDetectionAndRemediation: true,
        },
        azure: {
          cloud: 'AzurePublicCloud',
          bootstrapToken: { token: 'a.b' },
          arc: { anything: 1 },
        },
        node: { kubelet: { whatever: 1 } },
        kubernetes: { version: '1.35' },
        paths: {},
        npd: {},
      }),
    ).toEqual([]);
    expect(findUnknownConfigKeys('not an object')).toEqual([]);
  });

  it('says the key is kept and has no effect', () => {
    expect(
      describeUnknownConfigKey('/etc/aks-flex-node/config.json', {
        key: 'agent.logLevl',
        closest: 'agent.logLevel',
      }),
    ).toBe(
      '/etc/aks-flex-node/config.json: agent.logLevl is not a key this release or the Go releases read (did you mean agent.logLevel?); it is kept in the file but has no effect',
    );
  });
});
