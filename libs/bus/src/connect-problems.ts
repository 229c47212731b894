import { ConfigError, type NatsTls } from '@mailer/config'
import { ErrorCode, NatsError } from 'nats'

/** What the NATS server answers a login it refuses with. */
const LOGIN_REFUSED = new Set<string>([
  ErrorCode.AuthorizationViolation,
  ErrorCode.BadAuthentication,
  ErrorCode.AuthenticationExpired,
])

/** Node's codes for a server certificate that does not chain to a trusted CA. */
const UNTRUSTED = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
])
const OUT_OF_DATE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID'])

const config = (variable: string, message: string) =>
  new ConfigError([variable], `Invalid configuration:\n  ${variable}: ${message}`)

/**
 * A first connection's failure that waiting will not fix, as the ConfigError to stop with (exit
 * 78 in main.ts): a refused login, a server certificate the settings do not trust, TLS asked of a
 * server without it, a client certificate the server refuses. Undefined for the rest (the server
 * is down or still starting), which the caller waits out. Messages never hold credentials.
 */
export function connectProblem(err: unknown, tls: NatsTls | undefined): ConfigError | undefined {
  if (err instanceof NatsError) {
    if (LOGIN_REFUSED.has(err.code))
      return config(
        'NATS_URL',
        `the NATS server refused its login (${err.message}); check the user and password or token in it`,
      )
    // Thrown by the client when `tls` is set and the server's INFO has neither tls_required nor tls_available.
    if (err.code === ErrorCode.ServerOptionNotAvailable && err.message === 'tls')
      return config(
        tls?.caFile ? 'NATS_TLS_CA_FILE' : tls?.certFile ? 'NATS_TLS_CERT_FILE' : 'NATS_TLS',
        'the NATS server does not offer TLS, but NATS_TLS=true, a tls:// NATS_URL or a NATS_TLS_* file asks for it: enable TLS on the server (its `tls` block) or remove them',
      )
    // The client could not read a NATS_TLS_* file (checked at start: it went away since).
    if (err.code === ErrorCode.Tls && tls)
      return config(
        tls.certFile ? 'NATS_TLS_CERT_FILE' : 'NATS_TLS_CA_FILE',
        `the NATS client could not load its TLS files (${err.message})`,
      )
    return undefined
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? ''
  const detail = (err as Error | undefined)?.message ?? code
  if (UNTRUSTED.has(code))
    return config(
      'NATS_TLS_CA_FILE',
      tls?.caFile
        ? `the NATS server's certificate does not chain to the CA in ${tls.caFile} (${detail}): give the CA that signed it`
        : `the NATS server's certificate is not signed by a CA Node trusts (${detail}): set NATS_TLS_CA_FILE to the CA that signed it (a private CA, cert-manager's)`,
    )
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return config(
      'NATS_URL',
      `the NATS server's certificate does not name the host NATS_URL connects to (${detail}): use a host name the certificate holds`,
    )
  if (OUT_OF_DATE.has(code))
    return config(
      'NATS_URL',
      `the NATS server's certificate is out of date (${detail}): renew it on the server`,
    )
  // A TLS alert from the server: it refused our client certificate, or our lack of one.
  if (/^ERR_SSL_.*ALERT/.test(code)) {
    const alert = (err as { reason?: string }).reason ?? code
    return tls?.certFile
      ? config(
          'NATS_TLS_CERT_FILE',
          `the NATS server refused the client certificate in ${tls.certFile} (${alert}): give one its CA signed`,
        )
      : clientCertRequired(`the NATS server refused the TLS connection (${alert})`)
  }
  return undefined
}

/** The ConfigError for a server that verifies client certificates when NATS_TLS_CERT_FILE is unset. */
export function clientCertRequired(what: string): ConfigError {
  return config(
    'NATS_TLS_CERT_FILE',
    `${what}: it verifies client certificates (tls verify: true) and none is set; set NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE to a certificate its CA signed`,
  )
}
