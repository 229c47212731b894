import { createPgPool, type PgPool } from '@mailer/db'
import { useTestEnv } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { claimEmails } from '../src/infra/claim.js'
import { recordOutcomes } from '../src/infra/record.js'
import { plannedRecords } from './planned-records.js'

// Outcomes of concurrent attempts are written together (one statement for many emails). Two
// emails to one address that bounces then suppress it once, from the earlier email; an address
// listed by hand after the emails were accepted becomes the bounce (the stronger reason).
const te = useTestEnv()
let pool: PgPool

beforeAll(async () => {
  pool = createPgPool(te.databaseUrl, { max: 2 })
  const ids = ['email_bounce_1', 'email_bounce_2']
  await pool.query(
    `INSERT INTO emails (id, project_id, mode, source, status, from_address, subject)
     SELECT id, 'proj_1', 'live', 'api', 'queued', 'a@example.com', 's' FROM unnest($1::text[]) id`,
    [ids],
  )
  await pool.query(
    `INSERT INTO email_recipients (email_id, address, kind, status)
     SELECT id, a, 'to', 'queued' FROM unnest($1::text[]) id, unnest($2::text[]) a`,
    [ids, ['listed@example.com', 'gone@example.com']],
  )
  await pool.query(
    `INSERT INTO suppressions (address, reason, created_at) VALUES ('listed@example.com', 'manual', '2026-01-02T03:04:05Z')`,
  )
})

afterAll(async () => {
  await pool?.end()
})

describe('hard bounces written together', () => {
  it('suppress each address once, from the earlier email, upgrading a manual entry', async () => {
    const claimed = await claimEmails(pool, ['email_bounce_1', 'email_bounce_2'], 30)
    const records = plannedRecords(claimed, { stage: 'rcpt', code: 550, text: '550 5.1.1 No such user' })
    // One statement for both, as the dispatcher's group commit writes them.
    const written = await recordOutcomes(pool, records)
    expect(written.every((w) => w !== null)).toBe(true)
    const { rows } = await pool.query(
      'SELECT address, reason, source_email_id, created_at FROM suppressions ORDER BY address',
    )
    expect(rows.map(({ created_at: _, ...r }) => r)).toEqual([
      { address: 'gone@example.com', reason: 'hard_bounce', source_email_id: 'email_bounce_1' },
      { address: 'listed@example.com', reason: 'hard_bounce', source_email_id: 'email_bounce_1' },
    ])
    expect(rows[1].created_at).toEqual(new Date('2026-01-02T03:04:05Z'))
    const statuses = await pool.query(`SELECT DISTINCT status FROM emails`)
    expect(statuses.rows).toEqual([{ status: 'bounced' }])
  })
})
