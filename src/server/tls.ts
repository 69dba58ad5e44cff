import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/** PEM material for an HTTPS server. */
export interface TlsMaterial {
  cert: string;
  key: string;
}

/** Where the self-signed localhost certificate lives under a data directory. */
export function selfSignedPaths(dataDir: string): { cert: string; key: string } {
  return { cert: join(dataDir, 'tls', 'localhost.crt'), key: join(dataDir, 'tls', 'localhost.key') };
}

/**
 * A self-signed certificate for localhost, 127.0.0.1 and ::1, generated once into `<dataDir>/tls/` (key
 * mode 0600) and reused after. The CLI trusts it when pointed at the same data directory.
 */
export async function ensureSelfSignedCertificate(dataDir: string): Promise<TlsMaterial> {
  const paths = selfSignedPaths(dataDir);
  if (existsSync(paths.cert) && existsSync(paths.key)) {
    return { cert: readFileSync(paths.cert, 'utf8'), key: readFileSync(paths.key, 'utf8') };
  }
  mkdirSync(join(dataDir, 'tls'), { recursive: true, mode: 0o700 });
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
  writeFileSync(paths.key, pems.private, { mode: 0o600 });
  writeFileSync(paths.cert, pems.cert, { mode: 0o644 });
  return { cert: pems.cert, key: pems.private };
}

/** Reads a certificate/key pair from files. */
export function readTlsFiles(certPath: string, keyPath: string): TlsMaterial {
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}
