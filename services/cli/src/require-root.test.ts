import { describe, expect, it, vi } from 'vitest';
import { isAgentError } from '@aks-flex-node/log';
import { requireRoot } from './require-root.js';

describe('requireRoot hint (issue 24 item 5: hints run as printed)', () => {
  it('repeats the whole command line under sudo, quoted as the shell reads it', () => {
    vi.spyOn(process, 'geteuid').mockReturnValue(1000);
    try {
      let thrown: unknown;
      try {
        requireRoot('recover-agent-upgrade', 'it restores the last-good binary', [
          'recover-agent-upgrade',
          '--message',
          "the node's kubelet crashed",
        ]);
      } catch (error) {
        thrown = error;
      }
      expect(isAgentError(thrown, 'NOT_ROOT')).toBe(true);
      expect((thrown as { hint?: string }).hint).toBe(
        "run it again as root: `sudo aks-flex-node recover-agent-upgrade --message 'the node'\\''s kubelet crashed'`",
      );
    } finally {
      vi.restoreAllMocks();
    }
  });
});
