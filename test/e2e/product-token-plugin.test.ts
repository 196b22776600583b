import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import { repoRoot } from './harness/e2e-paths.js';
import {
  copyIn,
  installProduct,
  packReleaseArchive,
  productPaths,
  productUnits,
  readReleaseArchive,
  runOrThrow,
  waitForUnitState,
  withHost,
  writeHostFile,
  type Host,
  type ReleaseArchive,
} from './harness/index.js';
import { productBinary } from './harness/product.js';
import { makeTestPki } from '../support/token-services/test-pki.js';

// Issue 23, on the real-shaped node (harness/real-node.ts): the kubelet
// inside machine kube1 gets its API token by running the machine's copy of
// the agent, /usr/local/bin/aks-flex-node as the machine sees it, through the
// kubeconfig the Go agent writes for it. After an upgrade from the Go release
// to this product the copy is this product's binary and must answer `token
// kubelogin`; after a rollback to the Go release (its stand-in,
// test/fixtures/go-release.sh) the copy is that binary again and the call
// still works as it serves it.
//
// The token services are remote (IMDS, and the cluster's API server): local
// stand-ins replace them inside the host (its network is private), started
// from test/support/token-services/plugin-services.ts. The API server accepts
// only tokens the IMDS stand-in issued.
//
// The kubelet's call is made by @kubernetes/client-node (an exec credential
// plugin run as client-go runs it: the kubeconfig's command, args and env,
// KUBERNETES_EXEC_INFO), with the machine's /usr/local/bin bound over the
// host's in a private mount namespace, so the kubeconfig's command is the
// machine's copy. Not chroot: the harness's machine rootfs holds the
// machine's files but no C library, so the copy runs with the host's (a real
// machine's Ubuntu rootfs has them; the copy is the same file either way).
const machineRoot = '/var/lib/machines/kube1';
const copy = `${machineRoot}/usr/local/bin/aks-flex-node`;
/** Where the Go agent's kubelet reads its kubeconfig inside the machine. */
const kubeletKubeconfig = `${machineRoot}/var/lib/kubelet/kubeconfig`;
const work = '/var/tmp/token-plugin';
const servicesUnit = 'e2e-token-services.service';
const goRelease = path.join(repoRoot, 'test/fixtures/go-release.sh');
const serverId = '6dae42f8-4368-4678-94ff-3960e28e3630';

async function shell(host: Host, script: string): Promise<string> {
  return (
    await runOrThrow(host, ['/bin/bash', '-euc', script], { timeoutMs: 150_000 })
  ).stdout.trim();
}

/**
 * The kubelet's kubeconfig as the Go agent writes it (clientcmd's encoding),
 * naming the machine's copy. AKS_FLEX_NODE_IMDS_ENDPOINT and
 * AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS are the test's own additions:
 * they point the plugin at the IMDS stand-in instead of 169.254.169.254.
 */
function kubeconfig(apiServer: string, ca: string, imds: string): string {
  return `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${Buffer.from(ca).toString('base64')}
    server: ${apiServer}
  name: cluster
contexts:
- context:
    cluster: cluster
    user: user
  name: context
current-context: context
kind: Config
preferences: {}
users:
- name: user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      args:
      - token
      - kubelogin
      - --server-id
      - ${serverId}
      command: /usr/local/bin/aks-flex-node
      env:
      - name: AAD_LOGIN_METHOD
        value: msi
      - name: AKS_FLEX_NODE_IMDS_ENDPOINT
        value: ${imds}
      - name: AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS
        value: "true"
      interactiveMode: Never
      provideClusterInfo: false
`;
}

/** What the kubelet's call saw: the API server's answer and the copy that served it. */
interface KubeletCall {
  readonly exit: string;
  readonly gitVersion: string;
  readonly stderr: string;
  readonly copyVersion: string;
  readonly copySha: string;
  readonly currentSha: string;
}

/** The kubelet's token refresh through the machine's copy, and the API request with it. */
async function kubeletCall(host: Host): Promise<KubeletCall> {
  const facts = await shell(
    host,
    `set +e
     out=$(unshare -m --propagation private /bin/sh -c \\
       'mount --bind ${machineRoot}/usr/local/bin /usr/local/bin &&
        exec ${work}/node ${work}/client-node-version.mjs ${kubeletKubeconfig}' 2>${work}/call.err)
     echo "exit=$?"
     echo "gitVersion=$out"
     echo "stderr=$(tr '\\n' ' ' <${work}/call.err)"
     echo "copyVersion=$(${copy} version)"
     echo "copySha=$(sha256sum ${copy} | cut -d' ' -f1)"
     echo "currentSha=$(sha256sum "$(readlink -f ${productPaths.currentLink})" | cut -d' ' -f1)"`,
  );
  const seen = Object.fromEntries(
    facts
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  ) as Record<string, string>;
  return {
    exit: seen['exit'] ?? '',
    gitVersion: seen['gitVersion'] ?? '',
    stderr: seen['stderr'] ?? '',
    copyVersion: seen['copyVersion'] ?? '',
    copySha: seen['copySha'] ?? '',
    currentSha: seen['currentSha'] ?? '',
  };
}

/** The ExecCredential the copy prints for the kubeconfig's call, run by hand as client-go runs it (v1). */
async function execCredential(host: Host, imds: string): Promise<Record<string, unknown>> {
  const text = await shell(
    host,
    `KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}' \\
     AAD_LOGIN_METHOD=msi AKS_FLEX_NODE_IMDS_ENDPOINT=${imds} AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true \\
     ${copy} token kubelogin --server-id ${serverId}`,
  );
  return JSON.parse(text) as Record<string, unknown>;
}

describeWithProduct("product: the kubelet's exec credential in the machine", () => {
  let local = '';
  let go: ReleaseArchive;
  let ours: ReleaseArchive;
  beforeAll(async () => {
    local = await mkdtemp(path.join(tmpdir(), 'token-plugin-'));
    go = await packReleaseArchive(local, 'go', 'v0.9.0-go', await readFile(goRelease, 'utf8'));
    ours = await readReleaseArchive(path.dirname(productBinary), '');
    await makeTestPki(local);
    await build({
      entryPoints: {
        'plugin-services': path.join(repoRoot, 'test/support/token-services/plugin-services.ts'),
        'client-node-version': path.join(
          repoRoot,
          'test/support/token-services/client-node-version.ts',
        ),
      },
      outdir: local,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      // client-node's CommonJS dependencies require Node's modules.
      banner: {
        js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
      },
      logLevel: 'warning',
    });
  }, 120_000);
  afterAll(async () => {
    if (local !== '') await rm(local, { recursive: true, force: true });
  });

  it('issue23 after an upgrade to this product the copy answers token kubelogin; after a rollback to the Go release it serves the call again', async () => {
    await withHost({ name: 'token-plugin' }, async (host) => {
      const nodeArch = process.arch === 'arm64' ? 'arm64' : 'x64';
      await copyIn(
        host,
        path.join(repoRoot, `node_modules/node-linux-${nodeArch}/bin/node`),
        `${work}/node`,
      );
      for (const file of ['plugin-services.mjs', 'client-node-version.mjs']) {
        await copyIn(host, path.join(local, file), `${work}/${file}`, 0o644);
      }
      await copyIn(host, path.join(local, 'server.key'), `${work}/server.key`, 0o600);
      const ca = await readFile(path.join(local, 'server.crt'), 'utf8');
      await writeHostFile(host, `${work}/server.crt`, ca);
      await copyIn(host, go.path, '/var/tmp/go.tar.gz', 0o644);
      await copyIn(host, ours.path, '/var/tmp/ours.tar.gz', 0o644);
      await shell(
        host,
        `systemd-run --unit=${servicesUnit} ${work}/node ${work}/plugin-services.mjs ${work}
         for _ in $(seq 1 300); do [ -s ${work}/services.json ] && break; sleep 0.1; done
         [ -s ${work}/services.json ]`,
      );
      const services = JSON.parse(await shell(host, `cat ${work}/services.json`)) as {
        imds: string;
        apiServer: string;
      };
      await writeHostFile(
        host,
        kubeletKubeconfig,
        kubeconfig(services.apiServer, ca, services.imds),
        0o600,
      );

      // The node runs the Go release: this product takes it over, then
      // upgrades to the Go release (a downgrade), as product-go-release-units does.
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
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
      await shell(
        host,
        `for _ in $(seq 1 600); do [ -s /var/lib/go-release/results ] && break; sleep 0.2; done
         grep -q 'Complete Succeeded' /var/lib/go-release/results`,
      );

      // 1. The Go release upgrades to this product: the copy is this product's binary.
      await shell(host, `"${productPaths.currentLink}" upgrade-to /var/tmp/ours.tar.gz`);
      const upgraded = await kubeletCall(host);
      expect(upgraded.copyVersion).toMatch(/^aks-flex-node \d+\.\d+\.\d+ \(commit /);
      expect(upgraded.copySha).toBe(upgraded.currentSha);
      expect(upgraded.exit, upgraded.stderr).toBe('0');
      expect(upgraded.gitVersion).toBe('v1.35.6');
      const credential = await execCredential(host, services.imds);
      expect(credential).toMatchObject({
        kind: 'ExecCredential',
        apiVersion: 'client.authentication.k8s.io/v1',
      });
      expect((credential.status as { token?: string }).token).toMatch(/^imds\.system\.\d+$/);

      // 2. This product's daemon starts and judges the upgrade failed (the
      // copy differs from current, as if the sync was lost): it rolls back
      // to the Go last-good, which puts its own binary in the machine again.
      await shell(
        host,
        `printf 'not the agent\\n' >${copy}
         systemctl restart ${productUnits.agent}
         for _ in $(seq 1 600); do [ "$(wc -l </var/lib/go-release/results)" -ge 2 ] && break; sleep 0.2; done
         sed -n 2p /var/lib/go-release/results | grep -q 'Failed DaemonFailed'`,
      );
      const rolledBack = await kubeletCall(host);
      expect(rolledBack.copyVersion).toBe('aks-flex-node version v0.9.0-go');
      expect(rolledBack.copySha).toBe(rolledBack.currentSha);
      expect(rolledBack.exit, rolledBack.stderr).toBe('0');
      expect(rolledBack.gitVersion).toBe('v1.35.6');
      await runOrThrow(host, ['systemctl', 'stop', servicesUnit]);
    });
  });
});
