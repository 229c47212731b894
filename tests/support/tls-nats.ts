import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PrivateNats } from './infra.js'
import { createTestCa, issueCert, type TestCa, type TestCert } from './tls-certs.js'

/**
 * A private nats-server with JetStream and TLS from a private CA that verifies client
 * certificates, as the official NATS chart's `tls` block with `verify: true` and certificates from
 * cert-manager set one up. `dir` holds the CA, the server's and a client's certificates.
 */
export class TlsNats {
  private constructor(
    readonly nats: PrivateNats,
    readonly dir: string,
    readonly ca: TestCa,
    readonly client: TestCert,
  ) {}

  static async start(): Promise<TlsNats> {
    const dir = mkdtempSync(join(tmpdir(), 'nats-tls-'))
    const ca = createTestCa(dir)
    const server = issueCert(ca, dir, 'server', { names: ['IP:127.0.0.1', 'DNS:localhost'] })
    const client = issueCert(ca, dir, 'client', { client: true })
    const nats = await PrivateNats.start(
      ['--tlsverify', '--tlscert', server.certFile, '--tlskey', server.keyFile].concat([
        '--tlscacert',
        ca.caFile,
      ]),
    )
    return new TlsNats(nats, dir, ca, client)
  }

  get url(): string {
    return this.nats.url
  }

  get port(): number {
    return this.nats.port
  }

  /** The settings a service needs to connect: NATS_URL and the three NATS_TLS_* files. */
  settings(): Record<string, string> {
    return {
      NATS_URL: this.url,
      NATS_TLS_CA_FILE: this.ca.caFile,
      NATS_TLS_CERT_FILE: this.client.certFile,
      NATS_TLS_KEY_FILE: this.client.keyFile,
    }
  }

  async stop(): Promise<void> {
    await this.nats.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
