import 'dotenv/config'
// Offline Prisma 6.19 setup: see docs/development.md (wasm schema engine through adapter-pg).
import { randomUUID } from 'node:crypto'
import { PrismaPg } from '@prisma/adapter-pg'
import { defineConfig } from 'prisma/config'
import { migratorName, runScriptAtomically } from './migrate/atomic-script.mjs'

// Work around prisma/orm#27403: adapter-pg 6.x rejects PostgreSQL's `name` / "char" catalog
// types, which the wasm schema engine reads during introspection. Report them as text.
// And run each script (a migration file, CREATE/DROP DATABASE) as one transaction: see
// migrate/atomic-script.mjs. `schema` is where Prisma keeps _prisma_migrations (none in a shadow DB).
function patch<T>(q: T, schema?: string): T {
  const a = q as any
  if (a.executeScript)
    a.executeScript = async (script: string) => {
      try {
        await runScriptAtomically(a.underlyingDriver(), script, schema)
      } catch (error) {
        a.onError(error) // as adapter-pg reports errors, in the kinds Prisma knows
      }
    }
  const orig = a.performIO.bind(a)
  a.performIO = async (query: unknown) => {
    const r = await orig(query)
    for (const res of [r].flat())
      for (const f of res?.fields ?? []) if (f.dataTypeID === 19 || f.dataTypeID === 18) f.dataTypeID = 25
    return r
  }
  const st = a.startTransaction?.bind(a)
  if (st) a.startTransaction = async (...args: unknown[]) => patch(await st(...args), schema)
  return q
}

// Without DATABASE_URL, Prisma 6.19 does not say so: it goes for a native engine to download,
// which fails offline with `getaddrinfo ENOTFOUND binaries.prisma.sh`. `generate` never connects,
// so it gets a placeholder (as the Dockerfile gives it); every other command is told what is
// missing.
if (!process.env.DATABASE_URL) {
  if (process.argv.includes('generate'))
    process.env.DATABASE_URL = 'postgresql://generate@localhost:5432/generate'
  else
    throw new Error(
      'DATABASE_URL is not set: Prisma needs the PostgreSQL to work on (migrate diff makes its shadow database there), e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/mailer, the database make dev uses',
    )
}

/**
 * DATABASE_URL as the services connect with it (createDb in src/client.ts): node-postgres reads
 * the TLS settings in it (`sslmode`, `sslrootcert`, ...), so a database that takes TLS
 * connections only (RDS's rds.force_ssl) sees the migration as it sees the services. Picking the
 * host, user and password out of the URL dropped them, and the Helm hook failed there with
 * "User was denied access". `schema` is Prisma's parameter, not the server's. application_name
 * marks the migrator's sessions for migrate/run.mjs, which waits while one is still there.
 */
const connectionString = (database?: string) => {
  const u = new URL(process.env.DATABASE_URL!)
  u.searchParams.delete('schema')
  u.searchParams.set('application_name', migratorName(schema()))
  if (database) u.pathname = `/${database}`
  return u.toString()
}

/**
 * `?schema=` as the services read it (libs/db `schemaOf`): the migrations go where the services
 * will look for the tables, not into `public`.
 */
const schema = () => new URL(process.env.DATABASE_URL!).searchParams.get('schema') ?? 'public'

class MigratePg extends PrismaPg {
  async connect() {
    return patch(await super.connect(), schema())
  }
  // adapter-pg 6.19's own shadow DB: `{...config, database}` (ignored with connectionString) and it
  // drops the DB before closing its pool ("is being accessed by other users"). Do it in the right order.
  async connectToShadowDb() {
    const main = await this.connect()
    const name = `prisma_shadow_${randomUUID().replaceAll('-', '')}`
    await main.executeScript(`CREATE DATABASE "${name}"`)
    const shadow = patch(await new PrismaPg({ connectionString: connectionString(name) }).connect())
    const release = shadow.dispose.bind(shadow)
    shadow.dispose = async () => {
      await release()
      await main.executeScript(`DROP DATABASE IF EXISTS "${name}"`)
      await main.dispose()
    }
    return shadow
  }
}

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () =>
    new MigratePg(
      { connectionString: connectionString(), options: `-c search_path="${schema()}"` },
      { schema: schema() },
    ),
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
})
