import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { errorCode, LocalError } from '../shared/errors.js';
import type { TlsConfig } from './config.js';

/** PEM material for an HTTPS server. */
export interface TlsMaterial {
  cert: string;
  key: string;
}

/** Where the self-signed localhost certificate lives under a data directory. */
export function selfSignedPaths(dataDir: string): { cert: string; key: string } {
  return { cert: join(dataDir, 'tls', 'localhost.crt'), key: join(dataDir, 'tls', 'localhost.key') };
}

/** A self-signed certificate, and how to keep it when it is new (nothing to do when it was read). */
export interface SelfSigned {
  readonly material: TlsMaterial;
  /** Writes a newly generated pair into `<dataDir>/tls/` (directories 0700, key 0600); else a no-op. */
  save(): void;
}

/**
 * The self-signed certificate for localhost, 127.0.0.1 and ::1 under `<dataDir>/tls/`: read when it is
 * there, generated in memory otherwise. Nothing is written until {@link SelfSigned.save}, so a host that
 * fails to start leaves no certificate behind.
 */
async function selfSignedCertificate(dataDir: string): Promise<SelfSigned> {
  const paths = selfSignedPaths(dataDir);
  if (existsSync(paths.cert) && existsSync(paths.key)) {
    return { material: readTlsFiles(paths.cert, paths.key), save: () => undefined };
  }
  const material = await generateSelfSigned();
  return {
    material,
    save() {
      mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
      writeFileSync(paths.key, material.key, { mode: 0o600 });
      writeFileSync(paths.cert, material.cert, { mode: 0o644 });
    },
  };
}

/**
 * A self-signed certificate for localhost, generated once into `<dataDir>/tls/` (key mode 0600) and
 * reused after. The CLI trusts it when pointed at the same data directory.
 */
export async function ensureSelfSignedCertificate(dataDir: string): Promise<TlsMaterial> {
  const selfSigned = await selfSignedCertificate(dataDir);
  selfSigned.save();
  return selfSigned.material;
}

async function generateSelfSigned(): Promise<TlsMaterial> {
  const notAfter = new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    const code = errorCode(cause);
    throw new LocalError('CONFIG_INVALID', `cannot read the ${what} ${path} (${String(code ?? cause)})`, {
      cause,
    });
  }
}

/**
 * Reads and checks a certificate/key pair: each file must be PEM of its kind, and the key must belong to
 * the certificate.
 * @throws LocalError `CONFIG_INVALID` naming the flag, the file and what is wrong with it.
 */
function readTlsFiles(certPath: string, keyPath: string): TlsMaterial {
  const cert = readPem(certPath, 'TLS certificate (--tls-cert)');
  const key = readPem(keyPath, 'TLS private key (--tls-key)');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (cause) {
    throw new LocalError(
      'CONFIG_INVALID',
      `--tls-cert ${certPath} is not a PEM certificate: expected a "-----BEGIN CERTIFICATE-----" block`,
      { cause },
    );
  }
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey(key);
  } catch (cause) {
    throw new LocalError(
      'CONFIG_INVALID',
      `--tls-key ${keyPath} is not a PEM private key: expected a "-----BEGIN PRIVATE KEY-----" (or RSA/EC) block, unencrypted`,
      { cause },
    );
  }
  if (!x509.checkPrivateKey(keyObject)) {
    throw new LocalError(
      'CONFIG_INVALID',
      `--tls-key ${keyPath} is not the private key of --tls-cert ${certPath}`,
    );
  }
  return { cert, key };
}

/** The TLS material, checked; a new self-signed pair is saved only once the host listens. */
export async function loadTls(tls: TlsConfig, dataDir: string): Promise<SelfSigned | undefined> {
  switch (tls.mode) {
    case 'off':
      return undefined;
    case 'files': {
      const material = readTlsFiles(tls.cert, tls.key);
      return { material, save: () => undefined };
    }
    case 'self-signed':
      return selfSignedCertificate(dataDir);
  }
}
