import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostPaths, nspawnMachines } from '@aks-flex-node/layout';
import { nspawnLifecycleHelperUnder } from './install-nspawn-lifecycle-helper.js';
import { renderNspawnHooks } from './render-nspawn-hooks.js';

const goldenDir = path.join(import.meta.dirname, '../../../systemd/golden');
const helper = nspawnLifecycleHelperUnder('/opt/unbounded/agent');

/** The golden file's name: the override's directory is folded into it. */
function goldenName(file: string): string {
  const parent = path.basename(path.dirname(file));
  return parent.endsWith('.service.d') ? `${parent}-${path.basename(file)}` : path.basename(file);
}

describe('nspawn hooks', () => {
  const kube1 = renderNspawnHooks(hostPaths, 'kube1', helper);

  it.each(kube1.map((asset) => [goldenName(asset.path), asset]))(
    'daemon#6.2 %s renders byte-identical to its golden file',
    async (name, asset) => {
      // Regenerate with UPDATE_GOLDEN=1 after an intended change, and review the diff.
      if (process.env.UPDATE_GOLDEN === '1') {
        const { writeFile } = await import('node:fs/promises');
        await writeFile(path.join(goldenDir, `${name}.golden`), asset.content);
      }
      expect(asset.content).toBe(await readFile(path.join(goldenDir, `${name}.golden`), 'utf8'));
    },
  );

  it('daemon#6.2 writes the regenerate-config unit before the override that pulls it in', () => {
    expect(kube1.map((asset) => asset.path)).toEqual([
      '/etc/systemd/system/unbounded-agent-regenerate-config@kube1.service',
      '/etc/systemd/system/systemd-nspawn@kube1.service.d/override.conf',
    ]);
    expect(kube1.map((asset) => asset.mode)).toEqual([0o644, 0o644]);
  });

  it.each(nspawnMachines)(
    'daemon#6.2 %s: pre-start and post-start name the helper by its absolute path',
    (machine) => {
      const [unit, override] = renderNspawnHooks(hostPaths, machine, helper).map((a) => a.content);
      expect(unit).toMatch(/^Type=oneshot$/m);
      expect(unit).toMatch(/^Restart=on-failure$/m);
      expect(unit).toContain(
        `ExecStart=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle nspawn-lifecycle pre-start ${machine}\n`,
      );
      expect(unit).toContain(`Before=systemd-nspawn@${machine}.service\n`);
      expect(override).toContain(
        `ExecStartPost=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle nspawn-lifecycle post-start ${machine}\n`,
      );
      expect(override).toContain(`Wants=unbounded-agent-regenerate-config@${machine}.service\n`);
      expect(override).toContain(`After=unbounded-agent-regenerate-config@${machine}.service\n`);
      expect(`${unit}${override}`).not.toContain('{{');
    },
  );

  it('daemon#6.1 on a linked host the hooks name the helper under /usr/local', () => {
    const legacy = renderNspawnHooks(hostPaths, 'kube2', nspawnLifecycleHelperUnder('/usr/local'));
    for (const asset of legacy) {
      expect(asset.content).toContain(
        '/usr/local/bin/unbounded-agent-nspawn-lifecycle nspawn-lifecycle',
      );
      expect(asset.content).not.toContain('/opt/unbounded');
    }
  });
});
