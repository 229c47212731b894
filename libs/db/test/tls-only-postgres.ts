import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TLSSocket } from 'node:tls'
import { selfSignedCert } from '../../../tests/support/tls-certs.js'

/** The 8-byte SSLRequest a client sends first when it wants TLS (PostgreSQL protocol 53.2.10). */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])

/** An ErrorResponse as PostgreSQL sends it to a client its pg_hba.conf refuses. */
function fatal(message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0C28000\0M${message}\0\0`)
  const head = Buffer.alloc(5)
  head.write('E')
  head.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([head, fields])
}

/**
 * A PostgreSQL that takes TLS connections only, as managed ones do (RDS's rds.force_ssl, Azure's
 * require_secure_transport): TLS is terminated here with a throwaway self-signed certificate and
 * the session goes on to the real server at `target`; a client starting in clear gets the error a
 * `hostssl`-only pg_hba.conf gives. `caFile` is the certificate to verify it with (sslrootcert);
 * `names` are the certificate's subjectAltName entries.
 */
export async function startTlsOnlyPostgres(
  target: URL,
  names = ['DNS:localhost', 'IP:127.0.0.1'],
): Promise<{ port: number; caFile: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'pg-tls-'))
  const { certFile, key, cert } = selfSignedCert(dir, names)

  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => undefined)
    client.once('data', (first) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        client.end(fatal('no pg_hba.conf entry for host "127.0.0.1", user "postgres", no encryption'))
        return
      }
      client.pause()
      client.write('S')
      const tls = new TLSSocket(client, { isServer: true, key, cert })
      const upstream = createConnection(Number(target.port || 5432), target.hostname)
      sockets.add(upstream)
      upstream.on('close', () => sockets.delete(upstream))
      tls.on('error', () => upstream.destroy())
      upstream.on('error', () => tls.destroy())
      tls.pipe(upstream).pipe(tls)
      client.resume()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    port,
    caFile: certFile,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }).finally(() => rmSync(dir, { recursive: true, force: true })),
  }
}
