// The baseline: the least a durable accept can do. One HTTP POST → one INSERT (autocommit, so one
// fsync'd commit) → one JetStream publish (acknowledged once stored) → 202. No auth, no
// validation, no limits. Run as its own process by the bench; Mailer's accept figures are given as
// a ratio of this program's, measured on the same machine in the same run.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { connect, RetentionPolicy, StorageType } from 'nats'
import pg from 'pg'

const url = new URL(process.env.DATABASE_URL!)
const schema = url.searchParams.get('schema') ?? 'public'
url.searchParams.delete('schema')
// The same pool size the email service uses (startRuntime's default).
const pool = new pg.Pool({ connectionString: url.toString(), max: 10, options: `-c search_path=${schema}` })
await pool.query(
  'CREATE TABLE IF NOT EXISTS baseline_emails (id text PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
)

const nc = await connect({ servers: process.env.NATS_URL! })
const jsm = await nc.jetstreamManager()
await jsm.streams.add({
  name: 'BASELINE',
  subjects: ['baseline.emails'],
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  duplicate_window: 120_000_000_000,
})
const js = nc.jetstream()

const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      const id = randomUUID()
      await pool.query('INSERT INTO baseline_emails (id, body) VALUES ($1, $2)', [id, body])
      await js.publish('baseline.emails', new TextEncoder().encode(JSON.stringify({ id })), { msgID: id })
      res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ id, status: 'queued' }))
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }))
    }
  })
})
server.keepAliveTimeout = 65_000
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  // The bench reads this line to find the port.
  process.stdout.write(`${JSON.stringify({ listening: port })}\n`)
})

process.on('SIGTERM', () => {
  server.close()
  void Promise.allSettled([pool.end(), nc.drain()]).then(() => process.exit(0))
})
