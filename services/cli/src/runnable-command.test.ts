import { describe, expect, it } from 'vitest';
import { asInvoked } from './runnable-command.js';

describe('asInvoked (issue 24 item 5: hints run as printed)', () => {
  it('names the path the operator ran in each backquoted command, with or without sudo', () => {
    expect(
      asInvoked(
        'install the agent with `aks-flex-node start` instead, or `sudo aks-flex-node recover-agent-upgrade --message M`',
        '/var/tmp/aks-flex-node',
      ),
    ).toBe(
      'install the agent with `/var/tmp/aks-flex-node start` instead, or `sudo /var/tmp/aks-flex-node recover-agent-upgrade --message M`',
    );
  });

  it('leaves unit names, paths, prose and a name PATH found alone', () => {
    const text =
      'see `systemctl status aks-flex-node-agent` and /usr/local/bin/aks-flex-node; aks-flex-node start is prose';
    expect(asInvoked(text, '/opt/unbounded/agent/bin/aks-flex-node')).toBe(text);
    expect(asInvoked('run `aks-flex-node status`', 'aks-flex-node')).toBe(
      'run `aks-flex-node status`',
    );
  });
});
