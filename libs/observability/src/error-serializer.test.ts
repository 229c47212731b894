import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { ERR_LOG_MAX_BYTES } from './error-serializer.js'
import { createLogger } from './logger.js'

/** A service logger (createLogger, as startRuntime makes it) writing its lines here. */
function capture() {
  const lines: string[] = []
  const out = new Writable({
    write: (c, _e, cb) => {
      lines.push(String(c))
      cb()
    },
  })
  return { logger: createLogger({ service: 'test' }, out), lines }
}

const errOf = (line: string) => JSON.parse(line).err

describe('the err field of a log line', () => {
  it('keeps a long message to its beginning and the line within the budget', () => {
    const { logger, lines } = capture()
    logger.error({ err: new Error(`relay said no: ${'x'.repeat(100_000)}`) }, 'failed')
    expect(Buffer.byteLength(JSON.stringify(errOf(lines[0]!)))).toBeLessThanOrEqual(ERR_LOG_MAX_BYTES)
    expect(errOf(lines[0]!).message).toMatch(/^relay said no: x+… \[\d+ more\]$/)
    expect(errOf(lines[0]!).stack).toMatch(/^at /)
  })

  it("reduces Prisma's code frame and arguments to the call and what was wrong", () => {
    const { logger, lines } = capture()
    const err = Object.assign(
      new Error(
        `\nInvalid \`prisma.project.create()\` invocation in\n/app/x.js:1:2\n\n  1 ${'function(){}'.repeat(5000)}\n→ 2 x\n\n{\n  data: { name: "${'y'.repeat(50_000)}" }\n}\n\nArgument \`id\`: Invalid value provided. Expected String, provided Int.`,
      ),
      { clientVersion: '6.19.3' },
    )
    logger.error({ err }, 'failed')
    expect(errOf(lines[0]!).message).toBe(
      'Invalid `prisma.project.create()` invocation: Argument `id`: Invalid value provided. Expected String, provided Int.',
    )
    expect(errOf(lines[0]!).clientVersion).toBe('6.19.3')
  })

  it('never carries the login of a URL, in the message, a property, the cause or a plain string', () => {
    const { logger, lines } = capture()
    const cause = new Error('connect to postgresql://mailer:s3cret-db@db.internal:5432/mailer failed')
    const err = Object.assign(new Error('nats://tok3n-secret@nats:4222 refused', { cause }), {
      input: 'smtps://apikey:s3cret-smtp@smtp.relay.example:465',
      meta: { url: 'postgres://u:s3cret-meta@h/db' },
    })
    logger.error({ err }, 'failed')
    logger.warn({ err: String(cause) }, 'unavailable')
    const text = lines.join('')
    expect(text).not.toMatch(/s3cret|tok3n/)
    expect(errOf(lines[0]!).cause.message).toBe(
      'connect to postgresql://[redacted]@db.internal:5432/mailer failed',
    )
    expect(errOf(lines[0]!).input).toBe('smtps://[redacted]@smtp.relay.example:465')
  })

  it('takes out a long login too (a cloud IAM token as the password, a NATS JWT as the token)', () => {
    const { logger, lines } = capture()
    const token = `S3CRET${'A'.repeat(1200)}`
    const err = new Error(`connect to postgresql://iam_user:${token}@db.internal:5432/mailer failed`)
    logger.error({ err }, 'failed')
    logger.warn({ err: `nats://${token}@nats:4222 refused` }, 'unavailable')
    expect(lines.join('')).not.toContain('S3CRET')
    expect(errOf(lines[0]!).message).toBe('connect to postgresql://[redacted]@db.internal:5432/mailer failed')
  })

  it("keeps pino's redaction of secret properties", () => {
    const { logger, lines } = capture()
    logger.error({ err: Object.assign(new Error('bad'), { password: 'hunter2', code: 'E1' }) }, 'failed')
    expect(lines[0]).not.toContain('hunter2')
    expect(errOf(lines[0]!).code).toBe('E1')
  })

  it('bounds large or circular properties and long cause chains', () => {
    const { logger, lines } = capture()
    const meta: Record<string, unknown> = { rows: 'r'.repeat(10_000) }
    meta.self = meta
    let err = new Error('innermost')
    for (let i = 0; i < 10; i++)
      err = Object.assign(new Error(`level ${i}`, { cause: err }), { detail: 'd'.repeat(5000) })
    logger.error({ err: Object.assign(err, { meta }) }, 'failed')
    const logged = errOf(lines[0]!)
    expect(Buffer.byteLength(JSON.stringify(logged))).toBeLessThanOrEqual(ERR_LOG_MAX_BYTES)
    expect(logged.message).toBe('level 9')
    expect(logged.meta).toBe('[unserializable]')
  })
})
