import { ConfigError } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { loadEnv } from './env.js'

const base = { DATABASE_URL: 'postgres://u@localhost:5432/db' }

describe('dispatcher env', () => {
  it('defaults to the file transport and the contract retry schedule', () => {
    expect(loadEnv(base)).toMatchObject({
      MAIL_TRANSPORT: 'file',
      MAIL_OUTBOX_DIR: '.data/outbox',
      PLATFORM_LIMIT_RETRY_SECONDS: 3600,
      RETRY_BASE_SECONDS: 15,
      RETRY_MAX_SECONDS: 3600,
      MAX_RETRIES: 8,
      DISPATCH_ACK_WAIT_SECONDS: 30,
    })
  })

  it('takes fractional seconds so tests can shorten the schedule', () => {
    expect(
      loadEnv({ ...base, RETRY_BASE_SECONDS: '0.2', PLATFORM_LIMIT_RETRY_SECONDS: '0.5' }),
    ).toMatchObject({
      RETRY_BASE_SECONDS: 0.2,
      PLATFORM_LIMIT_RETRY_SECONDS: 0.5,
    })
  })

  it('needs SMTP_URL for the smtp transport, and an smtp(s) URL at that', () => {
    expect(() => loadEnv({ ...base, MAIL_TRANSPORT: 'smtp' })).toThrow(/SMTP_URL/)
    expect(() => loadEnv({ ...base, MAIL_TRANSPORT: 'smtp', SMTP_URL: 'http://relay:25' })).toThrow(
      ConfigError,
    )
    expect(
      loadEnv({ ...base, MAIL_TRANSPORT: 'smtp', SMTP_URL: 'smtps://u:p@relay.example:465' }).SMTP_URL,
    ).toBe('smtps://u:p@relay.example:465')
  })

  it('upgrades with STARTTLS when offered and verifies the relay by default; both can be set', () => {
    expect(loadEnv(base)).toMatchObject({ SMTP_STARTTLS: 'offered', SMTP_TLS_VERIFY: true })
    expect(loadEnv({ ...base, SMTP_STARTTLS: 'required', SMTP_TLS_VERIFY: 'false' })).toMatchObject({
      SMTP_STARTTLS: 'required',
      SMTP_TLS_VERIFY: false,
    })
    expect(() => loadEnv({ ...base, SMTP_STARTTLS: 'sometimes' })).toThrow(/SMTP_STARTTLS/)
  })

  it('waits 10 minutes for the answer to a final dot (RFC 5321 4.5.3.2.6), never less than for the other answers', () => {
    expect(loadEnv(base)).toMatchObject({ SMTP_TIMEOUT_SECONDS: 30, SMTP_DATA_TIMEOUT_SECONDS: 600 })
    expect(loadEnv({ ...base, SMTP_DATA_TIMEOUT_SECONDS: '45.5' }).SMTP_DATA_TIMEOUT_SECONDS).toBe(45.5)
    expect(
      loadEnv({ ...base, SMTP_TIMEOUT_SECONDS: '90', SMTP_DATA_TIMEOUT_SECONDS: '60' })
        .SMTP_DATA_TIMEOUT_SECONDS,
    ).toBe(90)
    expect(() => loadEnv({ ...base, SMTP_DATA_TIMEOUT_SECONDS: '3601' })).toThrow(/SMTP_DATA_TIMEOUT_SECONDS/)
  })

  it("drains for at least the final dot's answer plus a margin: SHUTDOWN_TIMEOUT_SECONDS is raised, never lowered", () => {
    // The shared default (25 s) against the default wait for the dot's answer (600 s).
    expect(loadEnv(base).SHUTDOWN_TIMEOUT_SECONDS).toBe(613)
    expect(
      loadEnv({ ...base, SMTP_TIMEOUT_SECONDS: '5.5', SMTP_DATA_TIMEOUT_SECONDS: '5.5' })
        .SHUTDOWN_TIMEOUT_SECONDS,
    ).toBe(25)
    expect(
      loadEnv({
        ...base,
        SMTP_TIMEOUT_SECONDS: '5',
        SMTP_DATA_TIMEOUT_SECONDS: '20.5',
        DISPATCH_ACK_WAIT_SECONDS: '60',
      }).SHUTDOWN_TIMEOUT_SECONDS,
    ).toBe(34)
    // The other answers' time-out counts when it is the longer one.
    expect(
      loadEnv({ ...base, SMTP_TIMEOUT_SECONDS: '60', SMTP_DATA_TIMEOUT_SECONDS: '1' })
        .SHUTDOWN_TIMEOUT_SECONDS,
    ).toBe(73)
    expect(
      loadEnv({ ...base, SMTP_DATA_TIMEOUT_SECONDS: '30', SHUTDOWN_TIMEOUT_SECONDS: '90' })
        .SHUTDOWN_TIMEOUT_SECONDS,
    ).toBe(90)
  })

  it("takes a killed dispatcher's emails over after 30 s by default, whatever the relay time-out", () => {
    // Claims outlive slow relays by being refreshed, and the final dot is fenced by the claim
    // (ClaimKeeper.holds): the relay time-out no longer has to fit twice in the ack wait.
    expect(loadEnv(base)).toMatchObject({ DISPATCH_ACK_WAIT_SECONDS: 30, SMTP_TIMEOUT_SECONDS: 30 })
    expect(loadEnv({ ...base, DISPATCH_ACK_WAIT_SECONDS: '10', SMTP_TIMEOUT_SECONDS: '60' })).toMatchObject({
      DISPATCH_ACK_WAIT_SECONDS: 10,
      SMTP_TIMEOUT_SECONDS: 60,
      SMTP_DATA_TIMEOUT_SECONDS: 600,
    })
  })

  it("refuses an ack wait whose claim refreshes would be older than the email service's lost-dispatch margin", () => {
    // Refreshed every third of it; DISPATCH_RECOVERY_SECONDS is at least 150.
    expect(loadEnv({ ...base, DISPATCH_ACK_WAIT_SECONDS: '300' }).DISPATCH_ACK_WAIT_SECONDS).toBe(300)
    expect(() => loadEnv({ ...base, DISPATCH_ACK_WAIT_SECONDS: '301' })).toThrow(/DISPATCH_ACK_WAIT_SECONDS/)
  })
})
