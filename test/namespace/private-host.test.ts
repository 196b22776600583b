import { describe, expect, it } from 'vitest';
import { namespaceUnavailable, runOnPrivateHost, runOnPrivateHostAsync } from './private-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/private-host: ${unavailable}`);

// A scenario that outlives its timeout must still say how far it got: a CI
// run under load once failed with a bare "spawnSync unshare ETIMEDOUT".
describe.skipIf(unavailable !== undefined)('a private host that outlives its timeout', () => {
  const script = 'echo reached-the-first-step; sleep 30; echo never-reached';

  it('run in the worker: gives back what it printed and says it was killed', () => {
    const run = runOnPrivateHost(script, 1500);
    expect(run.status).toBe(-1);
    expect(run.stdout).toContain('reached-the-first-step');
    expect(run.stdout).not.toContain('never-reached');
    expect(run.stderr).toContain('killed after its 1500 ms timeout');
  });

  it('run beside the worker: the same', async () => {
    const run = await runOnPrivateHostAsync(script, 1500);
    expect(run.status).toBe(-1);
    expect(run.stdout).toContain('reached-the-first-step');
    expect(run.stderr).toContain('killed after its 1500 ms timeout');
  });
});
