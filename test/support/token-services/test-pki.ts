import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Certificates made with openssl for one test run. */
export interface TestPki {
  /** A self-signed server certificate for 127.0.0.1 (trust it with NODE_EXTRA_CA_CERTS=serverCertFile). */
  readonly server: { key: string; cert: string };
  readonly serverCertFile: string;
  /**
   * A service principal's certificate (valid two days from now) and key, as PEM
   * text, and the files that hold them; expiry is shown by checking at a later `now`.
   */
  readonly client: {
    certPem: string;
    pemFile: string;
    pfxFile: string;
    certOnlyFile: string;
    otherKeyPemFile: string;
  };
}

/** Makes the server and client certificates under `dir` (about 0.3 s: RSA 2048 keys). */
export async function makeTestPki(dir: string): Promise<TestPki> {
  const at = (name: string): string => path.join(dir, name);
  const selfSigned = async (name: string, subject: string, extra: string[]): Promise<void> => {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      at(`${name}.key`),
      '-out',
      at(`${name}.crt`),
      '-subj',
      subject,
      ...extra,
    ]);
  };
  await selfSigned('server', '/CN=127.0.0.1', [
    '-days',
    '2',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  await selfSigned('client', '/CN=aks-flex-node-test-sp', ['-days', '2']);
  await selfSigned('other', '/CN=other', ['-days', '2']);
  const clientKey = await readFile(at('client.key'), 'utf8');
  const clientCert = await readFile(at('client.crt'), 'utf8');
  await writeFile(at('client.pem'), clientCert + clientKey, { mode: 0o600 });
  await writeFile(at('other-key.pem'), clientCert + (await readFile(at('other.key'), 'utf8')), {
    mode: 0o600,
  });
  await run('openssl', [
    'pkcs12',
    '-export',
    '-in',
    at('client.crt'),
    '-inkey',
    at('client.key'),
    '-out',
    at('client.pfx'),
    '-passout',
    'pass:',
    '-keypbe',
    'NONE',
    '-certpbe',
    'NONE',
    '-nomaciter',
  ]);
  return {
    server: {
      key: await readFile(at('server.key'), 'utf8'),
      cert: await readFile(at('server.crt'), 'utf8'),
    },
    serverCertFile: at('server.crt'),
    client: {
      certPem: clientCert,
      pemFile: at('client.pem'),
      pfxFile: at('client.pfx'),
      certOnlyFile: at('client.crt'),
      otherKeyPemFile: at('other-key.pem'),
    },
  };
}
