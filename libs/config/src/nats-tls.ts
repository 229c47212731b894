import { createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { bool } from './env-bool.js'
import { parseNatsUrl } from './nats-url.js'

/**
 * The nats client's `tls` connection option, as far as the services set it: files it reads at
 * each connection (a certificate renewed in a mounted Secret is used at the next reconnect), and
 * `handshakeFirst` for a server configured with `handshake_first` (TLS before the server's INFO).
 */
export interface NatsTls {
  caFile?: string
  certFile?: string
  keyFile?: string
  handshakeFirst?: boolean
}

/** The NATS TLS settings every service reads (baseEnv). */
export interface NatsTlsEnv {
  NATS_URL: string
  NATS_TLS?: boolean | undefined
  NATS_TLS_CA_FILE?: string | undefined
  NATS_TLS_CERT_FILE?: string | undefined
  NATS_TLS_KEY_FILE?: string | undefined
  NATS_TLS_HANDSHAKE_FIRST?: boolean | undefined
}

/** A problem between settings: the variable to change and why (parseEnv lists it with the rest). */
export interface EnvIssue {
  variable: string
  message: string
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/

function readable(path: string): string | Error {
  try {
    return readFileSync(path, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return new Error(
      code === 'ENOENT'
        ? `no such file: ${path}`
        : code === 'EACCES'
          ? `not readable by this process: ${path}`
          : `cannot read ${path} (${code ?? (e as Error).message})`,
    )
  }
}

/** What is wrong with a PEM file that should hold certificates (a CA bundle or one certificate). */
function certificateProblem(path: string): string | undefined {
  const text = readable(path)
  if (text instanceof Error) return text.message
  const first = PEM_CERT.exec(text)?.[0]
  if (!first) return `${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`
  try {
    new X509Certificate(first)
  } catch {
    return `${path} holds a PEM block that is not a valid certificate`
  }
  return undefined
}

/** What is wrong with a PEM file that should hold an unencrypted private key. */
function keyProblem(path: string): string | undefined {
  const text = readable(path)
  if (text instanceof Error) return text.message
  try {
    createPrivateKey(text)
  } catch {
    return `${path} holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)`
  }
  return undefined
}

/** A path setting checked at start: a file that cannot be read stops the process naming it. */
const pemFile = (problem: (path: string) => string | undefined) =>
  z
    .string()
    .optional()
    .superRefine((path, ctx) => {
      const p = path === undefined ? undefined : problem(path)
      if (p) ctx.addIssue({ code: 'custom', message: p })
    })

/** baseEnv's NATS TLS settings (docs/operations.md, "NATS over TLS"). */
export const natsTlsEnvFields = {
  /**
   * true: connect with TLS only (refuse a server without it). Unset: TLS when a `tls://` URL or a
   * NATS_TLS_* file asks for it, else when the server requires or offers it.
   */
  NATS_TLS: bool.optional(),
  /** The CA (PEM, one or more certificates) the server's certificate must chain to, instead of Node's. */
  NATS_TLS_CA_FILE: pemFile(certificateProblem),
  /** A client certificate (PEM) for a server that verifies clients (`verify: true`); with NATS_TLS_KEY_FILE. */
  NATS_TLS_CERT_FILE: pemFile(certificateProblem),
  /** The client certificate's private key (PEM, unencrypted). */
  NATS_TLS_KEY_FILE: pemFile(keyProblem),
  /** TLS before the server's greeting, for a server with `handshake_first` (NATS 2.10.4+). */
  NATS_TLS_HANDSHAKE_FIRST: bool.optional(),
}

const usesTlsScheme = (url: string) => parseNatsUrl(url).servers.some((s) => /^tls:\/\//i.test(s))

/** The settings that ask for TLS, as operators wrote them, for messages. */
function tlsAskedBy(env: NatsTlsEnv): string[] {
  return [
    ...(usesTlsScheme(env.NATS_URL) ? ['a tls:// NATS_URL'] : []),
    ...(['NATS_TLS_CA_FILE', 'NATS_TLS_CERT_FILE', 'NATS_TLS_KEY_FILE'] as const).filter((k) => env[k]),
    ...(env.NATS_TLS_HANDSHAKE_FIRST ? ['NATS_TLS_HANDSHAKE_FIRST'] : []),
  ]
}

/** Problems between the NATS TLS settings, each naming the variable to change. */
export function natsTlsIssues(env: NatsTlsEnv): EnvIssue[] {
  const issues: EnvIssue[] = []
  if (env.NATS_TLS_CERT_FILE && !env.NATS_TLS_KEY_FILE)
    issues.push({
      variable: 'NATS_TLS_KEY_FILE',
      message: "is required with NATS_TLS_CERT_FILE (the client certificate's private key)",
    })
  if (env.NATS_TLS_KEY_FILE && !env.NATS_TLS_CERT_FILE)
    issues.push({
      variable: 'NATS_TLS_CERT_FILE',
      message: 'is required with NATS_TLS_KEY_FILE (the client certificate the key belongs to)',
    })
  if (env.NATS_TLS_CERT_FILE && env.NATS_TLS_KEY_FILE) {
    try {
      const pem = PEM_CERT.exec(readFileSync(env.NATS_TLS_CERT_FILE, 'utf8'))?.[0] ?? ''
      const key = createPrivateKey(readFileSync(env.NATS_TLS_KEY_FILE, 'utf8'))
      if (!new X509Certificate(pem).checkPrivateKey(key))
        issues.push({
          variable: 'NATS_TLS_KEY_FILE',
          message: `is not the private key of the certificate in NATS_TLS_CERT_FILE (${env.NATS_TLS_CERT_FILE})`,
        })
    } catch {
      // Unreadable files are reported by the fields' own checks.
    }
  }
  const asked = tlsAskedBy(env)
  if (env.NATS_TLS === false && asked.length > 0)
    issues.push({
      variable: 'NATS_TLS',
      message: `is false, but ${asked.join(', ')} asks for TLS: unset NATS_TLS or remove them`,
    })
  return issues
}

/**
 * The `tls` option for the nats client: an object (TLS required: the client refuses a server
 * without it) when NATS_TLS, a `tls://` URL or a NATS_TLS_* file asks for TLS; undefined leaves
 * the client's default, TLS whenever the server requires or offers it, verified against Node's CAs.
 */
export function natsTls(env: NatsTlsEnv): NatsTls | undefined {
  if (env.NATS_TLS !== true && tlsAskedBy(env).length === 0) return undefined
  return {
    ...(env.NATS_TLS_CA_FILE ? { caFile: env.NATS_TLS_CA_FILE } : {}),
    ...(env.NATS_TLS_CERT_FILE ? { certFile: env.NATS_TLS_CERT_FILE } : {}),
    ...(env.NATS_TLS_KEY_FILE ? { keyFile: env.NATS_TLS_KEY_FILE } : {}),
    ...(env.NATS_TLS_HANDSHAKE_FIRST ? { handshakeFirst: true } : {}),
  }
}
