import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { selfSignedCert } from '../../../tests/support/tls-certs.js'
import { createDb } from '../src/client.js'
import { createPgPool } from '../src/pg-pool.js'
import { startTlsOnlyPostgres } from './tls-only-postgres.js'

/**
 * DATABASE_URL with `sslmode=verify-full&sslrootcert=<file>`, as docs/operations.md and the
 * chart's externalDatabase.tlsCA (mounted at /etc/mailer/postgresql-ca/ca.crt) have operators
 * write it for RDS, Cloud SQL or a private CA: the services' plain pg pools (createPgPool) and
 * Prisma (createDb) connect only to a server whose certificate chains to that file, and `?schema=`
 * still applies. The server takes TLS only, with a certificate no CA Node knows has signed.
 */
let server: Awaited<ReturnType<typeof startTlsOnlyPostgres>>
let otherDir: string
/** A CA file that did not sign the server's certificate. */
let otherCa: string

beforeAll(async () => {
  server = await startTlsOnlyPostgres(new URL(inject('databaseUrl')))
  otherDir = mkdtempSync(join(tmpdir(), 'pg-other-ca-'))
  otherCa = selfSignedCert(otherDir, ['IP:127.0.0.1']).certFile
})
afterAll(async () => {
  await server.close()
  rmSync(otherDir, { recursive: true, force: true })
})

/** The test database's URL through a TLS-only server, with these query parameters. */
function viaTls(params: Record<string, string>, port = server.port): string {
  const u = new URL(inject('databaseUrl'))
  u.host = `127.0.0.1:${port}`
  u.search = new URLSearchParams({ ...params, schema: 'tls_verify' }).toString()
  return u.toString()
}

const verifyFull = () => ({ sslmode: 'verify-full', sslrootcert: server.caFile })
const REFUSED = /self[- ]signed certificate|unable to verify|unable to get local issuer/i

async function withPool<T>(url: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = createPgPool(url, { max: 1 })
  try {
    return await work(pool)
  } finally {
    await pool.end()
  }
}

describe('createPgPool with sslmode and sslrootcert in DATABASE_URL', () => {
  it('hands node-postgres the CA file and full verification, and Prisma`s schema parameter as search_path only', async () => {
    await withPool(viaTls(verifyFull()), async (pool) => {
      // The settings each new connection of the pool starts from (pg reads the URL per client).
      const client = new pg.Client(pool.options) as unknown as {
        ssl: { ca?: string; rejectUnauthorized?: boolean }
      }
      expect(client.ssl.ca).toBe(readFileSync(server.caFile, 'utf8'))
      expect(client.ssl.rejectUnauthorized).not.toBe(false)
      expect(new URL(pool.options.connectionString!).searchParams.has('schema')).toBe(false)
      expect(pool.options.options).toContain('search_path="tls_verify"')
    })
  })

  it('connects to a server whose certificate chains to the file', async () => {
    const rows = await withPool(
      viaTls(verifyFull()),
      async (pool) => (await pool.query('SHOW search_path')).rows,
    )
    expect(rows).toEqual([{ search_path: '"tls_verify"' }])
  })

  it('refuses the server with another CA file, or with none (Node`s own CAs)', async () => {
    await withPool(viaTls({ sslmode: 'verify-full', sslrootcert: otherCa }), async (pool) => {
      await expect(pool.query('SELECT 1')).rejects.toThrow(REFUSED)
    })
    await withPool(viaTls({ sslmode: 'verify-full' }), async (pool) => {
      await expect(pool.query('SELECT 1')).rejects.toThrow(REFUSED)
    })
  })

  it('checks the host name too, unless verify-ca asks for the chain only (libpq`s meaning, uselibpqcompat)', async () => {
    // A certificate for another name than the one connected to (Cloud SQL's, reached by address).
    const named = await startTlsOnlyPostgres(new URL(inject('databaseUrl')), ['DNS:db.internal'])
    try {
      const url = (params: Record<string, string>) => viaTls(params, named.port)
      await withPool(url({ sslmode: 'verify-full', sslrootcert: named.caFile }), async (pool) => {
        await expect(pool.query('SELECT 1')).rejects.toThrow(/does not match certificate's altnames/)
      })
      const chainOnly = { sslmode: 'verify-ca', sslrootcert: named.caFile, uselibpqcompat: 'true' }
      await withPool(url(chainOnly), async (pool) => {
        expect((await pool.query('SELECT 1 AS n')).rows).toEqual([{ n: 1 }])
      })
      await withPool(url({ ...chainOnly, sslrootcert: otherCa }), async (pool) => {
        await expect(pool.query('SELECT 1')).rejects.toThrow(REFUSED)
      })
    } finally {
      await named.close()
    }
  })

  it('still connects with no-verify (encrypted, the certificate unchecked): the fallback', async () => {
    const rows = await withPool(
      viaTls({ sslmode: 'no-verify' }),
      async (pool) => (await pool.query('SELECT 1 AS n')).rows,
    )
    expect(rows).toEqual([{ n: 1 }])
  })
})

describe('createDb (Prisma) with sslmode and sslrootcert in DATABASE_URL', () => {
  it('connects when the certificate chains to the file and refuses it otherwise', async () => {
    const good = createDb(viaTls(verifyFull()), { poolSize: 1 })
    const bad = createDb(viaTls({ sslmode: 'verify-full', sslrootcert: otherCa }), { poolSize: 1 })
    try {
      expect(await good.$queryRawUnsafe('SHOW search_path')).toEqual([{ search_path: '"tls_verify"' }])
      await expect(bad.$queryRawUnsafe('SELECT 1')).rejects.toThrow(REFUSED)
    } finally {
      await good.$disconnect()
      await bad.$disconnect()
    }
  })
})
