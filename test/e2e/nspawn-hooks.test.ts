import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  installProduct,
  waitForJournal,
  runOrThrow,
  waitForUnitState,
  productUnits,
  withHost,
} from './harness/index.js';
import { writeHostFile } from './harness/write-host-file.js';
import {
  earlierReleaseHooks,
  execPaths,
  legacyHelper,
  movedHelper,
  standInMachineTemplate,
  startMachineExpectingRegeneratedHooks,
  units,
} from './harness/nspawn-stand-in.js';

describeWithProduct('product: the nspawn hooks under systemd', () => {
  it('starting the machine runs pre-start through the daemon; hooks from /usr/local move to the helper under the host root', async () => {
    await withHost({ name: 'nspawn-hooks' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      // The daemon's start installed this build as the helper (upstream #378).
      await runOrThrow(host, ['cmp', '/var/tmp/aks-flex-node', movedHelper]);

      await writeHostFile(host, `${units}/systemd-nspawn@.service`, standInMachineTemplate);
      // What an earlier release left: its helper and hooks under /usr/local.
      await runOrThrow(host, ['cp', '/var/tmp/aks-flex-node', legacyHelper]);
      await writeHostFile(
        host,
        `${units}/unbounded-agent-regenerate-config@kube1.service`,
        earlierReleaseHooks.unit,
      );
      await writeHostFile(
        host,
        `${units}/systemd-nspawn@kube1.service.d/override.conf`,
        earlierReleaseHooks.override,
      );
      await runOrThrow(host, ['systemctl', 'daemon-reload']);
      expect((await execPaths(host)).preStart).toContain(`path=${legacyHelper} `);

      // Starting the machine pulls in pre-start, which asks the daemon.
      await startMachineExpectingRegeneratedHooks(host);
      const daemonLine = 'regenerated the nspawn hooks for pre-start';
      expect(await waitForJournal(host, productUnits.agent, daemonLine)).toContain(daemonLine);

      // The daemon rewrote both hooks under the resolved root and reloaded systemd.
      for (const file of [
        `${units}/unbounded-agent-regenerate-config@kube1.service`,
        `${units}/systemd-nspawn@kube1.service.d/override.conf`,
      ]) {
        const content = (await runOrThrow(host, ['cat', file])).stdout;
        expect(content).toContain(`${movedHelper} nspawn-lifecycle`);
        expect(content).not.toContain('/usr/local');
      }
      const loaded = await execPaths(host);
      expect(loaded.preStart).toContain(`path=${movedHelper} `);
      expect(loaded.postStart).toContain(`path=${movedHelper} `);

      // The next start runs the helper under the host root, even with the old one gone.
      await runOrThrow(host, ['rm', legacyHelper]);
      await runOrThrow(host, ['systemctl', 'restart', 'systemd-nspawn@kube1.service']);
      await waitForUnitState(host, 'systemd-nspawn@kube1.service', 'active');
      const regenerate = await runOrThrow(host, [
        'systemctl',
        'show',
        '--value',
        '-p',
        'Result',
        'unbounded-agent-regenerate-config@kube1.service',
      ]);
      expect(regenerate.stdout.trim()).toBe('success');

      // The hooks as written pass systemd-analyze verify, with nothing to warn about.
      const verified = await host.run(
        `cd ${units} && systemd-analyze verify --man=no unbounded-agent-regenerate-config@kube1.service systemd-nspawn@kube1.service 2>&1`,
      );
      expect(verified.exitCode, verified.stdout).toBe(0);
      expect(verified.stdout.trim(), verified.stdout).toBe('');
    });
  });

  it('with no daemon the machine still starts, and pre-start logs why', async () => {
    await withHost({ name: 'nspawn-nodaemon' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      await writeHostFile(host, `${units}/systemd-nspawn@.service`, standInMachineTemplate);
      // The daemon writes the hooks once, then is stopped with its socket.
      await runOrThrow(host, [movedHelper, 'nspawn-lifecycle', 'pre-start', 'kube2']);
      await runOrThrow(host, ['systemctl', 'stop', productUnits.agentSocket, productUnits.agent]);
      const before = (
        await runOrThrow(host, [
          'sha256sum',
          `${units}/systemd-nspawn@kube2.service.d/override.conf`,
        ])
      ).stdout;

      await runOrThrow(host, ['systemctl', 'start', 'systemd-nspawn@kube2.service']);
      await waitForUnitState(host, 'systemd-nspawn@kube2.service', 'active');
      const hook = await waitForJournal(
        host,
        'unbounded-agent-regenerate-config@kube2.service',
        (journal) => journal.includes('no daemon answered') && journal.includes('keeps its config'),
      );
      expect(hook).toContain('not running the nspawn lifecycle phase: no daemon answered');
      expect(hook).toContain('the machine keeps its config');
      const after = (
        await runOrThrow(host, [
          'sha256sum',
          `${units}/systemd-nspawn@kube2.service.d/override.conf`,
        ])
      ).stdout;
      expect(after).toBe(before);
    });
  });
});
