import { readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from '@mailer/testing'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { simpleParser } from 'mailparser'
import { describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'

// MAIL_TRANSPORT=file, the development default: messages become .eml files instead of SMTP.
const dir = join(tmpdir(), `mailer-outbox-${process.pid}-${Date.now()}`)
let dkim: { txtName: string; txt: string }
const PROJECT = 'proj_01KDISPATCHFILETEST0000000'
const { seed } = useStack(['dispatcher'], {
  overrides: { MAIL_TRANSPORT: 'file', MAIL_OUTBOX_DIR: dir },
  seed: true,
  before: async () => {
    dkim = await seed.domain(PROJECT, 'dev.acme.test')
  },
  after: () => rm(dir, { recursive: true, force: true }),
})

describe('file transport', () => {
  it('writes <MAIL_OUTBOX_DIR>/<emailId>.eml, signed, and records the email as delivered by "file"', async () => {
    const id = await seed.email(PROJECT, {
      from: 'Dev <dev@dev.acme.test>',
      to: ['tester@example.com'],
      subject: 'Local preview',
      html: '<h1>Preview</h1>',
    })
    await seed.dispatch(id, PROJECT)
    await waitFor(
      async () =>
        (await seed.sql(`SELECT 1 FROM emails WHERE id = $1 AND status = 'delivered'`, [id])).length === 1,
      {
        what: 'delivered',
      },
    )

    const raw = await readFile(join(dir, `${id}.eml`))
    const mail = await simpleParser(raw)
    expect(mail.messageId).toBe(`<${id}@dev.acme.test>`)
    expect(mail.subject).toBe('Local preview')
    expect(mail.html).toContain('<h1>Preview</h1>')
    const verified = await dkimVerify(raw, {
      resolver: async (name: string) => (name === dkim.txtName ? [[dkim.txt]] : []),
    } as any)
    expect(verified.results[0]?.status.result).toBe('pass')

    const delivered = (
      await seed.sql(`SELECT payload FROM email_events WHERE email_id = $1 AND type = 'email.delivered'`, [
        id,
      ])
    )[0]
    expect(delivered.payload.data.delivery).toMatchObject({
      status: 'delivered',
      provider: 'file',
      smtpStatusCode: 250,
    })
  })
})
