import { baseEnv, ConfigError, natsTls, parseEnv } from '@mailer/config'
import { createLogger, Metrics } from '@mailer/observability'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { freePort, PrivateNats } from '../../../tests/support/infra.js'
import { createTestCa, type TestCa } from '../../../tests/support/tls-certs.js'
import { TlsNats } from '../../../tests/support/tls-nats.js'
import { Bus } from '../src/bus.js'
import { verifyingServer } from '../src/first-connect.js'

/**
 * A NATS server with TLS from a private CA that verifies client certificates (the official NATS
 * chart's `tls` block with `verify: true`, certificates from cert-manager): the services reach it
 * with NATS_TLS_CA_FILE, NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE, and without them stop at once
 * with a ConfigError naming the setting, instead of retrying for ever.
 */
let nats: TlsNats
/** A CA that signed nothing the server holds. */
let otherCa: TestCa
const buses: Bus[] = []

beforeAll(async () => {
  nats = await TlsNats.start()
  otherCa = createTestCa(nats.dir, 'other-ca')
}, 60_000)
afterAll(async () => {
  for (const b of buses) await b.close().catch(() => undefined)
  await nats?.stop()
})

/** A Bus connected with the TLS settings as a service reads them from its environment. */
async function connectWith(name: string, settings: Record<string, string>, url = nats.url): Promise<Bus> {
  const env = parseEnv(baseEnv, { DATABASE_URL: 'postgres://x@127.0.0.1/db', NATS_URL: url, ...settings })
  const tls = natsTls(env)
  const bus = await Bus.connect({
    url,
    prefix: 'tlstest',
    name,
    ...(tls ? { tls } : {}),
    logger: createLogger({ service: 'bus-tls-test', level: 'silent' }),
    metrics: new Metrics(`bus_tls_${name.replaceAll('-', '_')}`),
  })
  buses.push(bus)
  return bus
}

const mutual = () => {
  const { NATS_URL: _, ...files } = nats.settings()
  return files
}

/** The error Bus.connect fails with (a test timeout, not this, is what retrying for ever gives). */
const failure = (name: string, settings: Record<string, string>, url?: string) =>
  connectWith(name, settings, url).then(
    () => expect.unreachable('connected'),
    (e: unknown) => e,
  )

describe('NATS with TLS from a private CA and client certificates', () => {
  it('connects with the CA and a client certificate: a JetStream publish and a request-reply', async () => {
    const server = await connectWith('server', mutual())
    const caller = await connectWith('caller', mutual())
    expect(caller.isConnected).toBe(true)

    await server.jsm.streams.add({ name: server.streamName('TLS'), subjects: [server.subject('tls.>')] })
    const ack = await caller.publishDurable(caller.subject('tls.hello'), new TextEncoder().encode('{}'), 'm1')
    expect(ack).toMatchObject({ stream: 'TLSTEST_TLS', seq: 1 })

    server.serve('echo.tls', z.object({ n: z.number() }), async ({ n }) => ({ doubled: n * 2 }), {
      queue: 'tls',
    })
    await server.flush()
    expect(await caller.request('echo.tls', { n: 21 })).toEqual({ doubled: 42 })
  })

  it('a tls:// URL connects the same way', async () => {
    const bus = await connectWith('scheme', mutual(), `tls://127.0.0.1:${nats.port}`)
    expect(bus.isConnected).toBe(true)
  })

  it('without the CA: stops at once with a ConfigError naming NATS_TLS_CA_FILE', async () => {
    const err = await failure('no-ca', {
      NATS_TLS_CERT_FILE: nats.client.certFile,
      NATS_TLS_KEY_FILE: nats.client.keyFile,
    })
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).variables).toEqual(['NATS_TLS_CA_FILE'])
    expect((err as Error).message).toMatch(/not signed by a CA Node trusts .*set NATS_TLS_CA_FILE/)
  })

  it('with a CA that did not sign the server`s certificate: names NATS_TLS_CA_FILE and the file', async () => {
    const err = await failure('other-ca', { ...mutual(), NATS_TLS_CA_FILE: otherCa.caFile })
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).variables).toEqual(['NATS_TLS_CA_FILE'])
    expect((err as Error).message).toContain(`does not chain to the CA in ${otherCa.caFile}`)
  })

  it('without a client certificate: names NATS_TLS_CERT_FILE (the server verifies clients)', async () => {
    // The server's alert reaches the client, or (TLS 1.3 lets the client finish its handshake
    // first) the client only sees its connect timeout, 20 s, and the server's greeting says why.
    const err = await failure('no-cert', { NATS_TLS_CA_FILE: nats.ca.caFile })
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).variables).toEqual(['NATS_TLS_CERT_FILE'])
    expect((err as Error).message).toMatch(
      /verifies client certificates.*set NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE/,
    )
  }, 90_000)

  it('the timeout case is told apart by the server`s greeting, which asks for client certificates', async () => {
    const plain = `nats://127.0.0.1:${await freePort()}`
    expect(await verifyingServer([plain, nats.url])).toBe(nats.url)
    expect(await verifyingServer([plain])).toBeUndefined()
  })
})

describe('NATS_TLS=true against a server without TLS', () => {
  let plain: PrivateNats
  beforeAll(async () => {
    plain = await PrivateNats.start()
  }, 60_000)
  afterAll(() => plain.stop())

  it('refuses to go on in clear, naming NATS_TLS', async () => {
    const err = await failure('plain', { NATS_TLS: 'true' }, plain.url)
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).variables).toEqual(['NATS_TLS'])
    expect((err as Error).message).toContain('does not offer TLS')
  })
})
