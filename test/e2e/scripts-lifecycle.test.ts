import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  copyScriptsIn,
  createReleaseDir,
  expectNothingOfTheAgent,
  expectResetHost,
  resetThroughDaemon,
  installAndStart,
  packGoNamedArchive,
  parentSnapshot,
  productPaths,
  productUnits,
  readUnitState,
  runOrThrow,
  runScript,
  stageParent,
  withHost,
} from './harness/index.js';

// install.sh, start, the agent's reset, a rejoin (install.sh and start
// again) and uninstall.sh, under real systemd, from a release archive named
// as the Go releases name it. uninstall.sh runs the agent's own reset.

/** A transient restart unit named as the Go releases name the one they queue. */
const queuedRestart = 'aks-flex-node-agent-upgrade-restart-1764559999000000000';

describeWithProduct(
  'scripts: install.sh, start, reset, a rejoin and uninstall.sh under real systemd',
  () => {
    let releaseDir = '';
    let archive = '';

    beforeAll(async () => {
      releaseDir = await createReleaseDir();
      archive = await packGoNamedArchive(releaseDir);
    });

    afterAll(async () => {
      if (releaseDir !== '') {
        await rm(releaseDir, { recursive: true, force: true });
      }
    });

    it.each([
      ['plain', '/usr/local/bin'],
      ['acl', '/opt/unbounded/agent/bin'],
    ] as const)(
      '%s host: installed into %s, started, refused while running, reset, rejoined, uninstalled',
      async (variant, installDir) => {
        const node =
          // A plain host provisioned by an earlier release, with its helpers
          // under /usr/local: install.sh keeps to /usr/local/bin there. On
          // acl, /usr is read-only, so the node's helpers are under /opt.
          variant === 'plain' ? { helperRoot: '/usr/local' } : {};
        await withHost({ variant, name: 'scripts', node }, async (host) => {
          await copyScriptsIn(host, archive);
          await runOrThrow(host, ['bash', '-c', stageParent]);
          const parentBefore = await parentSnapshot(host);

          // Install and start, reset, rejoin (install again and start), uninstall.
          const firstDir = await installAndStart(host, 'install');
          expect(firstDir).toBe(installDir);

          // The agent now owns its binary: a second install must not replace it.
          const again = await runScript(host, 'install.sh');
          expect(again.exitCode, again.stdout).toBe(78);
          expect(again.stderr).toContain('while the agent service is installed or active');
          expect(again.stdout).not.toContain('Binary installed');

          // A restart the Go releases queue during a move, still pending: reset
          // must cancel it, or it would start the daemon again after the reset.
          await runOrThrow(host, [
            'systemd-run',
            '--quiet',
            '--collect',
            `--unit=${queuedRestart}`,
            '--on-active=120s',
            '/usr/bin/systemctl',
            'restart',
            productUnits.agent,
          ]);
          expect((await readUnitState(host, `${queuedRestart}.timer`)).activeState).toBe('active');

          // The daemon answers the reset, records it and stops itself.
          const operation = await resetThroughDaemon(host);
          expect(operation).toMatchObject({ kind: 'reset', state: 'succeeded' });
          expect(operation.id).toMatch(/^reset-\d/);
          expect(operation.keptBinary).toBe(productPaths.installedBinary);
          await expectResetHost(host);
          expect(await parentSnapshot(host)).toBe(parentBefore);
          expect((await readUnitState(host, `${queuedRestart}.timer`)).activeState).not.toBe(
            'active',
          );

          // A second reset finds no daemon, resets offline and changes nothing.
          const second = await host.run([productPaths.installedBinary, 'reset', '--json'], {
            timeoutMs: 120_000,
          });
          expect(second.exitCode, `${second.stdout}${second.stderr}`).toBe(0);
          expect(second.stdout).toContain('"removed":[]');
          await expectResetHost(host);

          await installAndStart(host, 'rejoin');

          const uninstall = await runScript(host, 'uninstall.sh', ['--force']);
          expect(uninstall.exitCode, `${uninstall.stdout}${uninstall.stderr}`).toBe(0);
          // Through the agent's own reset this time, not the script's fallback.
          expect(uninstall.stdout).toContain('Reset completed');
          expect(uninstall.stderr).not.toContain('removing the units directly');
          await expectNothingOfTheAgent(host);
          expect(await parentSnapshot(host)).toBe(parentBefore);
        });
      },
    );
  },
);
