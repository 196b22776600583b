/**
 * The token services the kubelet's exec credential plugin needs on an e2e
 * host (test/e2e/product-token-plugin.test.ts): a VM's IMDS, and the
 * cluster's API server, which accepts only the tokens that IMDS issued. Both
 * are remote services that cannot be reached from here (and the hosts have a
 * private network); these stand-ins speak their protocols on 127.0.0.1 inside
 * the host. The API server's certificate is made outside the host (its
 * rootfs has no openssl) and given as DIR/server.key and DIR/server.crt.
 * Bundled by esbuild and run with Node.js 24: `node plugin-services.mjs DIR`.
 * Writes DIR/services.json ({imds, apiServer}) once both listen.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startApiServer } from './api-server.ts';
import { startImdsEndpoint } from './imds-endpoint.ts';

const dir = process.argv[2] ?? '';
const tls = {
  key: await readFile(path.join(dir, 'server.key'), 'utf8'),
  cert: await readFile(path.join(dir, 'server.crt'), 'utf8'),
};
const imds = await startImdsEndpoint();
const apiServer = await startApiServer(tls, (token) => imds.hasIssued(token));
const target = path.join(dir, 'services.json');
await writeFile(
  `${target}.tmp`,
  JSON.stringify({ imds: imds.tokenUrl, apiServer: apiServer.origin }),
);
await rename(`${target}.tmp`, target);
