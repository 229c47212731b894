import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'prisma', 'migrations')

/** The migrations' folder names in the order Prisma applies them. */
export function migrationNames(): string[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
}

/** The migration SQL files in the order Prisma applies them. */
export function migrationSql(): string[] {
  return migrationNames().map((name) => readFileSync(join(migrationsDir, name, 'migration.sql'), 'utf8'))
}

/**
 * Creates `schema` and applies every migration inside it. Same SQL as `prisma migrate deploy`,
 * applied directly because the wasm schema engine takes seconds per run and tests make one
 * schema per file.
 */
export async function createMigratedSchema(baseUrl: string, schema: string): Promise<string> {
  const client = new pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await client.query(`CREATE SCHEMA "${schema}"`)
    await client.query(`SET search_path TO "${schema}"`)
    for (const sql of migrationSql()) {
      await client.query(sql.replace(/CREATE SCHEMA IF NOT EXISTS "public";/g, ''))
    }
  } finally {
    await client.end()
  }
  const url = new URL(baseUrl)
  url.searchParams.set('schema', schema)
  return url.toString()
}

export async function dropSchema(baseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}
