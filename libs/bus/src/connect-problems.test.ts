import { ConfigError } from '@mailer/config'
import { ErrorCode, NatsError } from 'nats'
import { describe, expect, it } from 'vitest'
import { connectProblem } from './connect-problems.js'

/** A Node TLS error as the nats client passes it on: a message and an OpenSSL/X509 code. */
const tlsError = (code: string, message: string, reason?: string) =>
  Object.assign(new Error(message), { code, ...(reason ? { reason } : {}) })

const variableOf = (err: unknown, tls?: { caFile?: string; certFile?: string }) => {
  const p = connectProblem(err, tls)
  return p instanceof ConfigError ? p.variables : p
}

describe('connectProblem', () => {
  it('names the setting for failures waiting would not fix', () => {
    expect(variableOf(NatsError.errorForCode(ErrorCode.AuthorizationViolation))).toEqual(['NATS_URL'])
    expect(
      variableOf(tlsError('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain')),
    ).toEqual(['NATS_TLS_CA_FILE'])
    expect(
      variableOf(
        tlsError('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"),
      ),
    ).toEqual(['NATS_URL'])
    expect(variableOf(tlsError('CERT_HAS_EXPIRED', 'certificate has expired'))).toEqual(['NATS_URL'])
    expect(
      variableOf(
        tlsError(
          'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
          'SSL routines:…:SSL alert number 48',
          'tlsv1 alert unknown ca',
        ),
        { certFile: '/c.pem' },
      ),
    ).toEqual(['NATS_TLS_CERT_FILE'])
    expect(variableOf(new NatsError('tls', ErrorCode.ServerOptionNotAvailable), {})).toEqual(['NATS_TLS'])
    expect(
      variableOf(new NatsError('tls', ErrorCode.ServerOptionNotAvailable), { caFile: '/ca.pem' }),
    ).toEqual(['NATS_TLS_CA_FILE'])
  })

  it('leaves outages to be waited out', () => {
    expect(connectProblem(NatsError.errorForCode(ErrorCode.ConnectionRefused), undefined)).toBeUndefined()
    expect(connectProblem(NatsError.errorForCode(ErrorCode.Timeout), { caFile: '/ca.pem' })).toBeUndefined()
    expect(connectProblem(tlsError('ECONNRESET', 'socket hang up'), { caFile: '/ca.pem' })).toBeUndefined()
    expect(connectProblem(undefined, undefined)).toBeUndefined()
  })

  it('keeps the OpenSSL alert short in the message', () => {
    const p = connectProblem(
      tlsError(
        'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
        '80BC:error:0A000412:SSL routines:…\n',
        'sslv3 alert bad certificate',
      ),
      undefined,
    )
    expect(p?.message).toContain(
      'refused the TLS connection (sslv3 alert bad certificate): it verifies client certificates',
    )
    expect(p?.message).not.toContain('SSL routines')
  })
})
