/**
 * Serves every token stand-in and an API server on 127.0.0.1 for a test that
 * runs the built executable in a private network namespace, where the test's
 * own process cannot be reached. Run by Node 24 directly:
 *   node serve.ts DIR CONFIG.json
 * It makes the test PKI in DIR, starts the services and writes
 * DIR/services.json with their URLs and files; SIGTERM stops them.
 */
import { readFile, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { startApiServer } from './api-server.ts';
import { startArcIdentityEndpoint } from './arc-identity-endpoint.ts';
import { startEntraAuthority } from './entra-authority.ts';
import { startImdsEndpoint } from './imds-endpoint.ts';
import { makeTestPki } from './test-pki.ts';

/** What a test registers: the secrets the stand-ins accept, and where Arc writes its challenges. */
export interface ServeConfig {
  tenantId: string;
  secret: string;
  federatedToken: string;
  userAssignedClientIds: string[];
  arcChallengeDir: string;
}

/** What DIR/services.json holds. */
export interface ServedServices {
  authority: string;
  failingAuthority: string;
  imds: string;
  failingImds: string;
  arc: string;
  apiServer: string;
  caFile: string;
  clientPemFile: string;
  clientPfxFile: string;
  certOnlyFile: string;
  otherKeyPemFile: string;
}

async function main(): Promise<void> {
  const [dir = '', configFile = ''] = process.argv.slice(2);
  const config = JSON.parse(await readFile(configFile, 'utf8')) as ServeConfig;
  const pki = await makeTestPki(dir);
  const clients = [
    { clientId: 'sp-secret', secret: config.secret },
    { clientId: 'sp-cert', certificatePem: pki.client.certPem },
    { clientId: 'workload', federatedToken: config.federatedToken },
  ];
  const authority = await startEntraAuthority({
    tenantId: config.tenantId,
    clients,
    tls: pki.server,
  });
  const failingAuthority = await startEntraAuthority({
    tenantId: config.tenantId,
    clients,
    tls: pki.server,
  });
  failingAuthority.failWith({ status: 503 });
  const imds = await startImdsEndpoint({ userAssignedClientIds: config.userAssignedClientIds });
  const failingImds = await startImdsEndpoint();
  failingImds.failWith({ status: 503 });
  const arc = await startArcIdentityEndpoint(config.arcChallengeDir);
  const issuers = [authority, imds, arc];
  const apiServer = await startApiServer(pki.server, (token) =>
    issuers.some((issuer) => issuer.hasIssued(token)),
  );
  const served: ServedServices = {
    authority: authority.origin,
    failingAuthority: failingAuthority.origin,
    imds: imds.tokenUrl,
    failingImds: failingImds.tokenUrl,
    arc: arc.tokenUrl,
    apiServer: apiServer.origin,
    caFile: pki.serverCertFile,
    clientPemFile: pki.client.pemFile,
    clientPfxFile: pki.client.pfxFile,
    certOnlyFile: pki.client.certOnlyFile,
    otherKeyPemFile: pki.client.otherKeyPemFile,
  };
  // Renamed into place: a reader polling for the file never sees it half written.
  const target = path.join(dir, 'services.json');
  await writeFile(`${target}.tmp`, JSON.stringify(served));
  await rename(`${target}.tmp`, target);
  const all = [authority, failingAuthority, imds, failingImds, arc, apiServer];
  process.once('SIGTERM', () => {
    void Promise.all(all.map((service) => service.close())).finally(() => process.exit(0));
  });
}

await main();
