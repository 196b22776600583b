import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentUpgradeRequestSchema } from './upgrade.js';

const accepted: Record<string, unknown> = {
  'agentbinary#2 a URL with a digest': {
    source: { url: 'https://releases.example/a.tar.gz', sha256: 'ab' },
  },
  'agentbinary#5 a URL without a digest': { source: { url: 'file:///var/tmp/a.tar.gz' } },
  'agentbinary§3.6 a binary on the host (agent-upgrade --candidate)': {
    source: { binaryPath: '/var/lib/aks-flex-node/host-agent-activation-x/candidate' },
  },
};

const refused: Record<string, { body: unknown; message: string }> = {
  'agentbinary§3.6 both a URL and a binary path': {
    body: { source: { url: 'https://releases.example/a.tar.gz', binaryPath: '/a' } },
    message: 'exactly one of url',
  },
  'agentbinary§3.6 neither a URL nor a binary path': {
    body: { source: {} },
    message: 'exactly one of url',
  },
  'agentbinary§3.6 a digest for a binary path': {
    body: { source: { binaryPath: '/a', sha256: 'ab' } },
    message: 'Unrecognized key: "sha256"',
  },
  'agentbinary§3.6 an unknown field beside the source': {
    body: { source: { binaryPath: '/a' }, force: true },
    message: 'Unrecognized key: "force"',
  },
};

describe('agentUpgradeRequestSchema', () => {
  it.each(Object.entries(accepted))('%s is accepted as sent', (_name, body) => {
    expect(agentUpgradeRequestSchema.parse(body)).toEqual(body);
  });

  it.each(Object.entries(refused))('%s is refused', (_name, row) => {
    const parsed = agentUpgradeRequestSchema.safeParse(row.body);
    expect(parsed.success).toBe(false);
    expect(parsed.error && z.prettifyError(parsed.error)).toContain(row.message);
  });
});
