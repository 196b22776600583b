/**
 * Asks an API server for its version through @kubernetes/client-node, with
 * the kubeconfig given: an exec credential there runs as client-node runs
 * it (v1). Prints the gitVersion; an error goes to stderr with exit 1.
 * Run by Node 24 directly: node client-node-version.ts KUBECONFIG
 */
import { KubeConfig, VersionApi } from '@kubernetes/client-node';

const kubeconfig = new KubeConfig();
kubeconfig.loadFromFile(process.argv[2] ?? '');
try {
  const version = await kubeconfig.makeApiClient(VersionApi).getCode();
  process.stdout.write(`${version.gitVersion}\n`);
} catch (error) {
  process.stderr.write(`client-node: ${String(error)}\n`);
  process.exitCode = 1;
}
