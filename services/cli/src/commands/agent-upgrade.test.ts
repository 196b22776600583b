import { exitCodeFor } from '@aks-flex-node/api';
import { isAgentError } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { runAgentUpgrade } from './agent-upgrade.js';

// Each of these is refused while the flags are read, before any socket, file or lock is touched.
const usageErrors: Record<string, { args: string[]; message: string }> = {
  'agentbinary§3.6.4 --url and --candidate together': {
    args: [
      '--url',
      'https://r.example/a.tar.gz',
      '--candidate',
      '/root/aks-flex-node-release/aks-flex-node',
    ],
    message: 'mutually exclusive',
  },
  'agentbinary§3.6.4 --sha256 with neither --url nor --candidate': {
    args: ['--sha256', 'ab'],
    message: '--sha256 checks a --url archive',
  },
  'agentbinary§3.6.4 --preflight without --candidate': {
    args: ['--url', 'https://r.example/a.tar.gz', '--preflight'],
    message: '--preflight plans a --candidate activation',
  },
  'agentbinary§3.6.4 --sha256 with --candidate': {
    args: ['--candidate', '/root/aks-flex-node-release/aks-flex-node', '--sha256', 'ab'],
    message: '--sha256 checks a --url archive',
  },
  'agentbinary§3.6.1 a relative --candidate': {
    args: ['--candidate', 'aks-flex-node', '--preflight'],
    message: 'is not an absolute, clean path',
  },
  'agentbinary§3.6.1 a --candidate that is not clean': {
    args: ['--candidate', '/root/../root/aks-flex-node'],
    message: 'is not an absolute, clean path',
  },
};

describe('agent-upgrade flags', () => {
  it.each(Object.entries(usageErrors))('%s is a usage error (exit 2)', async (_name, row) => {
    const error: unknown = await runAgentUpgrade(row.args).catch((thrown: unknown) => thrown);
    expect(isAgentError(error, 'INVALID_ARGUMENT')).toBe(true);
    expect(isAgentError(error) && exitCodeFor(error.code)).toBe(2);
    expect(isAgentError(error) && error.message).toContain(row.message);
  });
});
