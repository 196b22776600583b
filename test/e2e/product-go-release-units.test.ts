import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  copyIn,
  createReleaseDir,
  installProduct,
  packReleaseArchive,
  productPaths,
  productUnits,
  waitForJournal,
  readReleaseArchive,
  runOrThrow,
  waitForUnitState,
  withHost,
  type Host,
  type ReleaseArchive,
} from './harness/index.js';
import { productBinary } from './harness/product.js';
import { repoRoot } from './harness/e2e-paths.js';

// Issue 21 #4: another release never runs under this product's confinement.
// The Go stand-in (test/fixtures/go-release.sh) checks at its daemon's start
// that it can write /var/lib/machines and /usr/local and reach the host's
// /dev, as a Go daemon always could, and fails loudly if not. One host, a
// real-shaped node, three ways a Go binary comes to run: as the candidate of
// an AgentUpgrade (a downgrade), as last-good after this product's judge
// rolls back, and as last-good restored by the recovery unit's shim.
const goRelease = path.join(repoRoot, 'test/fixtures/go-release.sh');
const agentUnitFile = path.join(productPaths.unitDir, productUnits.agent);
const results = '/var/lib/go-release/results';
const copy = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';

async function shell(host: Host, script: string): Promise<string> {
  return (
    await runOrThrow(host, ['/bin/bash', '-euc', script], { timeoutMs: 150_000 })
  ).stdout.trim();
}

/** Waits until the Go stand-in has published `count` results; returns the last. */
async function goResult(host: Host, count: number): Promise<string> {
  return shell(
    host,
    `for _ in $(seq 1 600); do
       [ "$(wc -l <${results} 2>/dev/null || echo 0)" -ge ${count} ] && break; sleep 0.2
     done
     sed -n ${count}p ${results} | cut -d' ' -f2,3`,
  );
}

/** The agent unit is the Go release's: nothing of this product's confinement. */
async function expectGoUnits(host: Host): Promise<void> {
  const unit = await shell(host, `cat ${agentUnitFile}`);
  expect(unit).toContain(
    '# Trigger last-good recovery after the upgraded daemon repeatedly fails.',
  );
  expect(unit).not.toMatch(/ProtectSystem|PrivateDevices|Requires=|upgrade-guard/);
  const shown = await shell(
    host,
    `systemctl show -p ProtectSystem -p PrivateDevices --value ${productUnits.agent}`,
  );
  expect(shown.split('\n')).toEqual(['no', 'no']);
}

/**
 * Handed back: the units only this product has (socket, guard) are gone,
 * the socket stopped and disabled, so nothing answers or activates on it and
 * the Go release's reset has nothing of them to leave behind.
 */
async function expectProductUnitsRetired(host: Host): Promise<void> {
  const seen = await shell(
    host,
    `for u in ${productUnits.agentSocket} ${productUnits.upgradeGuard}; do
       f=${productPaths.unitDir}/$u
       echo "$u file=$([ -e "$f" ] && echo yes || echo no) $(systemctl show -p ActiveState --value "$u") enabled=$(ls /etc/systemd/system/*.wants/ | grep -c "^$u$" || true)"
     done`,
  );
  expect(seen.split('\n')).toEqual([
    `${productUnits.agentSocket} file=no inactive enabled=0`,
    `${productUnits.upgradeGuard} file=no inactive enabled=0`,
  ]);
  // The Go daemon was not stopped with the socket.
  expect(await shell(host, `systemctl is-active ${productUnits.agent} || true`)).toBe('active');
}

async function expectRightsChecked(host: Host, times: number): Promise<void> {
  const journal = await waitForJournal(
    host,
    productUnits.agent,
    (text) => (text.match(/rights checked/g)?.length ?? 0) >= times,
    { lines: 2000 },
  );
  expect(journal, 'the Go daemon ran confined').not.toContain('GO RELEASE CONFINED');
  expect(journal.match(/rights checked/g)?.length ?? 0, journal).toBe(times);
}

describeWithProduct('product: a Go binary starts under the units its release wrote', () => {
  let releaseDir = '';
  let go: ReleaseArchive;
  let ours: ReleaseArchive;
  beforeAll(async () => {
    releaseDir = await createReleaseDir();
    go = await packReleaseArchive(releaseDir, 'go', 'v0.9.0-go', await readFile(goRelease, 'utf8'));
    ours = await readReleaseArchive(path.dirname(productBinary), '');
  });
  afterAll(async () => {
    if (releaseDir !== '') await rm(releaseDir, { recursive: true, force: true });
  });

  it('issue21#4 a Go candidate (downgrade), a rollback by the judge to a Go last-good, a recovery to one: each runs unconfined', async () => {
    await withHost({ variant: 'plain', name: 'go-units' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      await copyIn(host, go.path, '/var/tmp/go.tar.gz', 0o644);
      await copyIn(host, ours.path, '/var/tmp/ours.tar.gz', 0o644);
      const productUnit = await shell(host, `cat ${agentUnitFile}`);
      expect(productUnit).toMatch(/^ProtectSystem=strict$/m);

      // 1. This product upgrades to the Go release (a downgrade). The Go
      // daemon answers no API, so the command cannot follow it past the restart.
      await host.run(
        [
          productPaths.installedBinary,
          'agent-upgrade',
          '--url',
          'file:///var/tmp/go.tar.gz',
          '--sha256',
          go.sha256,
          '--json',
          '--timeout',
          '5',
        ],
        { timeoutMs: 120_000 },
      );
      expect(await goResult(host, 1)).toBe('Complete Succeeded');
      await expectGoUnits(host);
      await expectRightsChecked(host, 1);
      await expectProductUnitsRetired(host);

      // 2. The Go release upgrades to this product; the machine's copy then
      // differs (as if the sync was lost), so this product's judge rolls back
      // to the Go last-good and restarts into it.
      await shell(
        host,
        `cur=${productPaths.currentLink}
         "$cur" upgrade-to /var/tmp/ours.tar.gz
         printf 'not the agent\\n' >${copy}
         systemctl restart ${productUnits.agent}`,
      );
      expect(await goResult(host, 2)).toBe('Failed DaemonFailed');
      await expectGoUnits(host);
      await expectRightsChecked(host, 2);
      await expectProductUnitsRetired(host);
      const mismatch = 'upgraded host and nspawn agent binaries do not match';
      const judged = await waitForJournal(host, productUnits.agent, mismatch, { lines: 2000 });
      expect(judged).toContain(mismatch);

      // 3. Again, but this product's candidate wrote its confined unit and
      // then kept failing: the recovery unit (as OnFailure= starts it) runs
      // the Go last-good's recover-agent-upgrade, and its shim writes the Go
      // release's agent unit before the restart.
      await shell(
        host,
        `cur=${productPaths.currentLink}
         "$cur" upgrade-to /var/tmp/ours.tar.gz
         systemctl stop ${productUnits.agent}
         cat >${agentUnitFile} <<'UNIT'
${productUnit}
UNIT
         systemctl daemon-reload
         systemctl start ${productUnits.recovery}`,
      );
      expect(await goResult(host, 3)).toBe('Failed DaemonFailed');
      await expectGoUnits(host);
      await expectRightsChecked(host, 3);
      await expectProductUnitsRetired(host);
      expect(await shell(host, `${productPaths.currentLink} version`)).toBe(
        'aks-flex-node version v0.9.0-go',
      );

      // 4. The Go release's own reset (spec daemon 8.2: stop and disable its
      // agent unit, remove it, the recovery unit and script and the signal,
      // reload) leaves no unit of this product, on disk or loaded.
      const left = await shell(
        host,
        `systemctl stop ${productUnits.agent}; systemctl disable ${productUnits.agent}
         rm -f ${agentUnitFile} ${productPaths.unitDir}/${productUnits.recovery}
         rm -f /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-recovery.sh /etc/aks-flex-node/agent-upgrade-signal.json
         systemctl daemon-reload
         find /etc/systemd/system -name 'aks-flex-node*' | sort
         for u in ${productUnits.agentSocket} ${productUnits.upgradeGuard} ${productUnits.agent}; do
           echo "$u $(systemctl show -p LoadState --value "$u") $(systemctl show -p ActiveState --value "$u")"
         done`,
      );
      expect(left.split('\n')).toEqual([
        `${productUnits.agentSocket} not-found inactive`,
        `${productUnits.upgradeGuard} not-found inactive`,
        `${productUnits.agent} not-found inactive`,
      ]);
    });
  });
});
