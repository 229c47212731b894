import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestCa, issueCert, type TestCa, type TestCert } from '../../../tests/support/tls-certs.js'
import { baseEnv, ConfigError, natsTls, parseEnv } from '../src/index.js'

/**
 * NATS_TLS, NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE and NATS_TLS_HANDSHAKE_FIRST
 * as every service reads them (baseEnv): files are checked at start, so a wrong path stops the
 * process naming the variable (exit 78) instead of every connection failing later.
 */
let dir: string
let ca: TestCa
let client: TestCert
let other: TestCert

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nats-tls-env-'))
  ca = createTestCa(dir)
  client = issueCert(ca, dir, 'client', { client: true })
  other = issueCert(ca, dir, 'other', { client: true })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const parse = (settings: Record<string, string>) =>
  parseEnv(baseEnv, { DATABASE_URL: 'postgres://x@h/db', ...settings })

/** The ConfigError's variables and message for these settings. */
function refusal(settings: Record<string, string>): { variables: string[]; message: string } {
  try {
    parse(settings)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return { variables: (e as ConfigError).variables, message: (e as Error).message }
  }
  return expect.unreachable('parsed')
}

describe('NATS TLS settings', () => {
  it('a CA file that does not exist is a config error naming NATS_TLS_CA_FILE and the path', () => {
    const r = refusal({ NATS_TLS_CA_FILE: join(dir, 'missing.pem') })
    expect(r.variables).toEqual(['NATS_TLS_CA_FILE'])
    expect(r.message).toContain(`NATS_TLS_CA_FILE: no such file: ${join(dir, 'missing.pem')}`)
  })

  it('files that hold no certificate or key are refused, naming the variable', () => {
    const junk = join(dir, 'junk.pem')
    writeFileSync(junk, 'not a certificate\n')
    expect(refusal({ NATS_TLS_CA_FILE: junk }).message).toMatch(
      /NATS_TLS_CA_FILE: .* holds no PEM certificate/,
    )
    expect(refusal({ NATS_TLS_CERT_FILE: junk, NATS_TLS_KEY_FILE: client.keyFile }).variables).toEqual([
      'NATS_TLS_CERT_FILE',
    ])
    // A certificate where the key should be.
    expect(refusal({ NATS_TLS_CERT_FILE: client.certFile, NATS_TLS_KEY_FILE: ca.caFile }).message).toMatch(
      /NATS_TLS_KEY_FILE: .* holds no unencrypted PEM private key/,
    )
  })

  it('a client certificate without its key, or a key without its certificate, is refused', () => {
    const noKey = refusal({ NATS_TLS_CERT_FILE: client.certFile })
    expect(noKey.variables).toEqual(['NATS_TLS_KEY_FILE'])
    expect(noKey.message).toContain('NATS_TLS_KEY_FILE: is required with NATS_TLS_CERT_FILE')
    expect(refusal({ NATS_TLS_KEY_FILE: client.keyFile }).variables).toEqual(['NATS_TLS_CERT_FILE'])
  })

  it('a key that does not belong to the certificate is refused', () => {
    const r = refusal({ NATS_TLS_CERT_FILE: client.certFile, NATS_TLS_KEY_FILE: other.keyFile })
    expect(r.variables).toEqual(['NATS_TLS_KEY_FILE'])
    expect(r.message).toContain('is not the private key of the certificate in NATS_TLS_CERT_FILE')
  })

  it('NATS_TLS=false next to a setting that asks for TLS is refused', () => {
    const r = refusal({ NATS_TLS: 'false', NATS_URL: 'tls://nats:4222', NATS_TLS_CA_FILE: ca.caFile })
    expect(r.variables).toEqual(['NATS_TLS'])
    expect(r.message).toContain('a tls:// NATS_URL, NATS_TLS_CA_FILE asks for TLS')
  })

  it('gives the nats client the files, and requires TLS whenever a setting asks for it', () => {
    expect(natsTls(parse({}))).toBeUndefined()
    expect(natsTls(parse({ NATS_TLS: 'false' }))).toBeUndefined()
    expect(natsTls(parse({ NATS_TLS: 'true' }))).toEqual({})
    expect(natsTls(parse({ NATS_URL: 'nats://a:4222,tls://u:p@b:4222' }))).toEqual({})
    expect(natsTls(parse({ NATS_TLS_HANDSHAKE_FIRST: 'true' }))).toEqual({ handshakeFirst: true })
    expect(
      natsTls(
        parse({
          NATS_TLS_CA_FILE: ca.caFile,
          NATS_TLS_CERT_FILE: client.certFile,
          NATS_TLS_KEY_FILE: client.keyFile,
        }),
      ),
    ).toEqual({ caFile: ca.caFile, certFile: client.certFile, keyFile: client.keyFile })
  })
})
