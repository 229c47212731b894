import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

// Throwaway certificates for the TLS tests (PostgreSQL behind TLS, NATS with TLS and client
// certificates), made with the openssl command line: P-256 keys (quick to make on a loaded
// machine), valid for a day, written as PEM files into a directory the test owns and removes.

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' })
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']

/** A certificate authority: `caFile` is what a client or server is told to trust. */
export interface TestCa {
  caFile: string
  keyFile: string
}

/** A certificate and its private key. */
export interface TestCert {
  certFile: string
  keyFile: string
}

/**
 * A throwaway self-signed certificate for `names` (subjectAltName entries such as
 * `IP:127.0.0.1`), written to `dir` as cert.pem (which is also its own CA) and key.pem.
 */
export function selfSignedCert(
  dir: string,
  names: string[],
  cn = 'mailer-test-db',
): { certFile: string; key: Buffer; cert: Buffer } {
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  openssl(
    ['req', '-x509', ...EC_KEY, '-subj', `/CN=${cn}`, '-days', '1'].concat([
      '-addext',
      `subjectAltName=${names.join(',')}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]),
  )
  return { certFile, key: readFileSync(keyFile), cert: readFileSync(certFile) }
}

/** A private CA (as cert-manager or an internal PKI issues), as `<dir>/<name>.pem` and its key. */
export function createTestCa(dir: string, name = 'ca'): TestCa {
  const caFile = join(dir, `${name}.pem`)
  const keyFile = join(dir, `${name}-key.pem`)
  openssl(
    ['req', '-x509', ...EC_KEY, '-subj', `/CN=mailer-test-${name}`, '-days', '1'].concat([
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout',
      keyFile,
      '-out',
      caFile,
    ]),
  )
  return { caFile, keyFile }
}

/**
 * A certificate signed by `ca`, as `<dir>/<name>.pem` and `<dir>/<name>-key.pem`: for a server
 * (`names`: its subjectAltName entries, e.g. `IP:127.0.0.1`) or, with `client`, for a client to
 * present to a server that verifies client certificates.
 */
export function issueCert(
  ca: TestCa,
  dir: string,
  name: string,
  opts: { names?: string[]; client?: boolean } = {},
): TestCert {
  const certFile = join(dir, `${name}.pem`)
  const keyFile = join(dir, `${name}-key.pem`)
  const ext = [
    // Else the config's v3_ca section would make it a CA certificate too.
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    `extendedKeyUsage=${opts.client ? 'clientAuth' : 'serverAuth'}`,
    ...(opts.names?.length ? [`subjectAltName=${opts.names.join(',')}`] : []),
  ]
  // `req -x509 -CA` (OpenSSL 3) signs the new key's certificate with the CA in one step.
  openssl(
    ['req', '-x509', ...EC_KEY, '-subj', `/CN=mailer-test-${name}`, '-days', '1'].concat([
      '-CA',
      ca.caFile,
      '-CAkey',
      ca.keyFile,
      ...ext.flatMap((e) => ['-addext', e]),
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]),
  )
  return { certFile, keyFile }
}
