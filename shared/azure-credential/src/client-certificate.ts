import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { AgentError, messageOf } from '@aks-flex-node/log';
import type forge from 'node-forge';

/**
 * A service principal's certificate file, checked and turned into the PEM
 * (certificate and private key) that @azure/identity signs its assertion
 * with. PEM is recognised by content, whatever the file is called; anything
 * else must be an unencrypted PKCS#12 named `.pfx` (spec/scripts.md, the
 * `--sp-client-certificate-file` row). The checks: readable, a certificate
 * and a private key, the key belongs to the certificate, and the certificate
 * is within its validity period at `now`.
 * Throws CREDENTIAL_FAILED naming the file and the failed check.
 */
export async function readClientCertificate(file: string, now = new Date()): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw certificateError(file, `cannot be read: ${messageOf(error)}`, error);
  }
  const text = bytes.toString('utf8');
  const pem = text.includes('-----BEGIN ') ? text : await pemOfPfx(file, bytes);
  checkPem(file, pem, now);
  return pem;
}

/**
 * Checks the certificate file the way `token kubelogin --client-certificate-file`
 * does before asking for a token. Throws CREDENTIAL_FAILED.
 */
export async function validateClientCertificateFile(file: string, now = new Date()): Promise<void> {
  await readClientCertificate(file, now);
}

function checkPem(file: string, pem: string, now: Date): void {
  const certBlock = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (certBlock === undefined) throw certificateError(file, 'holds no PEM certificate');
  const keyBlock =
    /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC )?PRIVATE KEY-----/.exec(
      pem,
    )?.[0];
  if (keyBlock === undefined) {
    throw certificateError(
      file,
      pem.includes('ENCRYPTED PRIVATE KEY')
        ? 'holds an encrypted private key; the agent needs it unencrypted'
        : 'holds no private key',
    );
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certBlock);
  } catch (error) {
    throw certificateError(
      file,
      `holds a certificate that does not parse: ${messageOf(error)}`,
      error,
    );
  }
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(keyBlock));
  } catch (error) {
    throw certificateError(
      file,
      `holds a private key that does not parse: ${messageOf(error)}`,
      error,
    );
  }
  if (!matches) throw certificateError(file, "holds a private key that is not the certificate's");
  if (now < new Date(certificate.validFrom)) {
    throw certificateError(file, `holds a certificate not valid before ${certificate.validFrom}`);
  }
  if (now > new Date(certificate.validTo)) {
    throw certificateError(file, `holds a certificate that expired ${certificate.validTo}`);
  }
}

/** The PEM of an unencrypted PKCS#12 file; node-forge is loaded only for this rare format. */
async function pemOfPfx(file: string, bytes: Buffer): Promise<string> {
  if (!file.toLowerCase().endsWith('.pfx')) {
    throw certificateError(file, 'is neither PEM nor a PKCS#12 file named .pfx');
  }
  const { default: forgeModule } = await import('node-forge');
  try {
    const p12 = forgeModule.pkcs12.pkcs12FromAsn1(
      forgeModule.asn1.fromDer(bytes.toString('binary')),
      '',
    );
    const bagsOf = (oid: string | undefined): forge.pkcs12.Bag[] =>
      oid === undefined ? [] : (p12.getBags({ bagType: oid })[oid] ?? []);
    const certs = bagsOf(forgeModule.pki.oids.certBag);
    const keys = [
      ...bagsOf(forgeModule.pki.oids.pkcs8ShroudedKeyBag),
      ...bagsOf(forgeModule.pki.oids.keyBag),
    ];
    const cert = certs[0]?.cert;
    const key = keys[0]?.key;
    if (cert === undefined) throw new Error('no certificate in it');
    if (key === undefined) throw new Error('no private key in it');
    return forgeModule.pki.certificateToPem(cert) + forgeModule.pki.privateKeyToPem(key);
  } catch (error) {
    throw certificateError(file, `is not an unencrypted PKCS#12 file: ${messageOf(error)}`, error);
  }
}

function certificateError(file: string, why: string, cause?: unknown): AgentError {
  return new AgentError('CREDENTIAL_FAILED', `service principal certificate ${file} ${why}`, {
    path: file,
    hint: 'give a PEM file with the certificate and its unencrypted private key, or an unencrypted PKCS#12 file named .pfx, registered on the service principal',
    ...(cause === undefined ? {} : { cause }),
  });
}
