// Starts the local stand-ins for Azure's services that fetch-bootstrap-data
// talks to, for the bats suite and inside e2e hosts: Entra ID, a VM's IMDS,
// an Arc machine's identity endpoint (each in token-services/) and Azure
// Resource Manager (mock-arm-server.ts). These are remote services that
// cannot be reached from the test machines; the servers speak their
// protocols on 127.0.0.1. Bundled by esbuild into one .mjs and run with
// Node.js 24: `node azure-services.mjs CONFIG.json`. Writes the endpoints as
// JSON to the config's `out` once every server listens; serves until killed.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { startMockArm, type MockArmConfig } from './mock-arm-server.js';
import { startArcIdentityEndpoint } from './token-services/arc-identity-endpoint.js';
import { startEntraAuthority, type RegisteredClient } from './token-services/entra-authority.js';
import { startImdsEndpoint, type ImdsOptions } from './token-services/imds-endpoint.js';

type Endpoints = Record<'authorityHost' | 'imdsEndpoint' | 'arcEndpoint' | 'armEndpoint', string>;

interface ServicesConfig {
  readonly tenantId: string;
  /** App registrations; a certificate is given by its PEM file. */
  readonly clients: (
    { clientId: string; secret: string } | { clientId: string; certificateFile: string }
  )[];
  readonly imds: ImdsOptions;
  readonly arcChallengeDir: string;
  readonly arm: MockArmConfig;
  /**
   * Fixed ports to serve each endpoint on as well, for a host whose
   * bootstrap.env was written before the servers started (the e2e first boot).
   */
  readonly ports?: Partial<Record<keyof Endpoints, number>>;
  /** Where to write the {@link Endpoints} JSON. */
  readonly out: string;
}

const configFile = process.argv[2];
if (configFile === undefined) {
  process.stderr.write('usage: node azure-services.mjs CONFIG.json\n');
  process.exit(2);
}
const config = JSON.parse(readFileSync(configFile, 'utf8')) as ServicesConfig;
const clients: RegisteredClient[] = config.clients.map((client) =>
  'secret' in client
    ? client
    : { clientId: client.clientId, certificatePem: readFileSync(client.certificateFile, 'utf8') },
);
const [entra, imds, arc, arm] = await Promise.all([
  startEntraAuthority({ tenantId: config.tenantId, clients }),
  startImdsEndpoint(config.imds),
  startArcIdentityEndpoint(config.arcChallengeDir),
  startMockArm(config.arm),
]);
const endpoints: Endpoints = {
  authorityHost: entra.origin,
  imdsEndpoint: imds.tokenUrl,
  arcEndpoint: arc.tokenUrl,
  armEndpoint: arm.origin,
};
for (const [name, port] of Object.entries(config.ports ?? {})) {
  const key = name as keyof Endpoints;
  endpoints[key] = await forward(port, endpoints[key]);
}
// Renamed into place: a reader polling for the file never sees half of it.
writeFileSync(`${config.out}.tmp`, `${JSON.stringify(endpoints)}\n`);
renameSync(`${config.out}.tmp`, config.out);

/** Serves `url`'s server on 127.0.0.1:`port` too, byte for byte; returns `url` at that port. */
async function forward(port: number, url: string): Promise<string> {
  const target = new URL(url);
  const upstreamPort = Number(target.port);
  const server = createServer((client) => {
    const upstream = createConnection(upstreamPort, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  target.port = String(port);
  return target.href.replace(/\/$/, '');
}
