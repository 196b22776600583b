import path from 'node:path';
import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  copyIn,
  productUnits,
  readJournal,
  waitForJournal,
  readProductStatus,
  runOrThrow,
  waitForUnitState,
  withHost,
  writeHostFile,
} from './harness/index.js';
import { goScriptConfig } from './harness/go-script-config.js';
import { productBinary } from './harness/product.js';
import { releaseArchiveFile } from './harness/release-archive.js';

// An earlier (Go) release's way of installing takes this build as it is: its
// install.sh downloads releases/download/<version>/aks-flex-node-linux-<arch>.tar.gz
// with curl, requires the one member aks-flex-node-linux-<arch>, copies it to
// /usr/local/bin/aks-flex-node, renders the config (spec/scripts.md 3.6) and
// runs `aks-flex-node start`. The build's own archive is served from a file:// URL.

/** The archive `pnpm build` wrote beside the binary. */
const releaseArchive = path.join(path.dirname(productBinary), releaseArchiveFile);
const releasesInHost = '/var/tmp/releases/download/0.1.0';

/** The Go install.sh's steps, as a script in the host. */
const goInstall = String.raw`set -euo pipefail
case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) exit 1 ;; esac
tmp=$(mktemp -d)
curl -fsSL "file://${releasesInHost}/aks-flex-node-linux-$arch.tar.gz" -o "$tmp/release.tar.gz"
tar -xzf "$tmp/release.tar.gz" -C "$tmp"
[ -f "$tmp/aks-flex-node-linux-$arch" ] || { echo "the archive has no aks-flex-node-linux-$arch" >&2; exit 1; }
install -m 0755 "$tmp/aks-flex-node-linux-$arch" /usr/local/bin/aks-flex-node
mkdir -p /etc/aks-flex-node
install -m 0600 /var/tmp/go-config.json /etc/aks-flex-node/config.json
rm -rf "$tmp"
sha256sum /etc/aks-flex-node/config.json | cut -d' ' -f1`;

describeWithProduct("an earlier release's way of installing takes this build", () => {
  it('plain host: curl, tar, the one member, the Go config, then start brings the agent up', async () => {
    await withHost({ variant: 'plain', name: 'go-install' }, async (host) => {
      await copyIn(host, releaseArchive, `${releasesInHost}/${releaseArchiveFile}`, 0o644);
      await writeHostFile(host, '/var/tmp/go-config.json', goScriptConfig, 0o600);
      const configDigest = (await runOrThrow(host, goInstall)).stdout.trim();

      // While a Go release holds its flock, start is refused at once and installs nothing.
      const refused = await host.run(String.raw`set -uo pipefail
        flock /run/aks-flex-node-agent-upgrade.lock sleep 30 & holder=$!
        until ! flock -n /run/aks-flex-node-agent-upgrade.lock true; do sleep 0.05; done
        /usr/local/bin/aks-flex-node start; code=$?
        pkill -KILL -P "$holder"; wait "$holder"
        ls /etc/systemd/system | grep -c '^aks-flex-node' || true
        exit "$code"`);
      expect(refused.exitCode, refused.stderr).toBe(4);
      expect(refused.stderr).toContain('/run/aks-flex-node-agent-upgrade.lock is held');
      expect(refused.stdout.trim()).toBe('0');

      // On a terminal (a pty under script), start speaks sentences, not JSON.
      const onTerminal = await runOrThrow(
        host,
        [
          'script',
          '-qec',
          '/usr/local/bin/aks-flex-node start; echo "start exited $?"',
          '/var/tmp/start.typescript',
        ],
        { timeoutMs: 180_000 },
      );
      expect(onTerminal.stdout, onTerminal.stdout).toContain('start exited 0');
      const lines = onTerminal.stdout.split(/\r?\n/).filter((line) => line.trim() !== '');
      expect(lines.length, onTerminal.stdout).toBeGreaterThan(0);
      expect(
        lines.filter((line) => line.trimStart().startsWith('{')),
        onTerminal.stdout,
      ).toEqual([]);
      expect(onTerminal.stdout).toContain('the agent is installed and running');

      await waitForUnitState(host, productUnits.agent, 'active');
      expect(await readProductStatus(host)).toBeTypeOf('object');
      // The daemon started with the Go config, and nothing rewrote it.
      const digest = await runOrThrow(
        host,
        "sha256sum /etc/aks-flex-node/config.json | cut -d' ' -f1",
      );
      expect(digest.stdout.trim()).toBe(configDigest);
      expect(await readJournal(host, productUnits.agent)).not.toContain('is not a valid config');

      // Run by systemd, start's structured lines go to the journal.
      await runOrThrow(
        host,
        'systemctl stop aks-flex-node-agent.socket aks-flex-node-agent.service',
      );
      await runOrThrow(
        host,
        [
          'systemd-run',
          '--wait',
          '--collect',
          '--unit=go-style-start',
          '/usr/local/bin/aks-flex-node',
          'start',
        ],
        { timeoutMs: 180_000 },
      );
      const journal = await waitForJournal(host, 'go-style-start.service', '"role":"start"');
      const structured = journal
        .split('\n')
        .map((line) => line.slice(line.indexOf('{')))
        .filter((line) => line.startsWith('{"level"'));
      expect(structured.length, journal).toBeGreaterThan(0);
      expect(
        structured.some((line) => line.includes('"role":"start"')),
        journal,
      ).toBe(true);
      await waitForUnitState(host, productUnits.agent, 'active');
    });
  });
});
