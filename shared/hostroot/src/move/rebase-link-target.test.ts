import { describe, expect, it } from 'vitest';
import { rebaseLinkTarget } from './rebase-link-target.js';

const prefixes = ['/usr/local', '/var/usrlocal'];
const final = '/opt/unbounded/agent';

describe('rebaseLinkTarget', () => {
  it.each([
    [
      'hostroot#50 a target under the legacy root moves under the root',
      '/usr/local/bin/x',
      '/opt/unbounded/agent/bin/x',
    ],
    [
      'hostroot#50 a target under the resolved legacy root moves too',
      '/var/usrlocal/bin/x',
      '/opt/unbounded/agent/bin/x',
    ],
    ['hostroot#50 a relative target is unchanged', 'aks-flex-node-blue', 'aks-flex-node-blue'],
    [
      'hostroot#50 a target elsewhere is unchanged',
      '/srv/agent/aks-flex-node',
      '/srv/agent/aks-flex-node',
    ],
    [
      'hostroot#50 a sibling of the legacy root is unchanged',
      '/usr/localother/bin/aks-flex-node',
      '/usr/localother/bin/aks-flex-node',
    ],
    ['hostroot#50 the legacy root itself is unchanged', '/usr/local', '/usr/local'],
    [
      'hostroot#50 an unclean target under the legacy root is cleaned and moved',
      '/usr/local//lib/./x',
      '/opt/unbounded/agent/lib/x',
    ],
  ])('%s', (_name, target, expected) => {
    expect(rebaseLinkTarget(target, prefixes, final)).toBe(expected);
  });
});
