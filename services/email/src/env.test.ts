import { ConfigError } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { loadEnv } from './env.js'

const base = { DATABASE_URL: 'postgres://u@localhost:5432/db' }

describe('email env', () => {
  it('has the contract defaults', () => {
    const env = loadEnv(base)
    expect(env).toMatchObject({
      RATE_LIMIT: 300,
      RATE_PERIOD: 60,
      CONTENT_RETENTION_DAYS: 30,
      MAX_MESSAGE_BYTES: 10 * 1024 * 1024,
      DOMAIN_VERIFICATION: 'skip',
      TEST_SKIP_OUTBOX_PUBLISH: false,
      TRACKING_ACK_WAIT_SECONDS: 10,
      LIST_SCAN_ROWS: 20_000,
    })
  })

  it('serves the fake-event route only with DEV_ROUTES=true', () => {
    expect(loadEnv(base).DEV_ROUTES).toBe(false)
    expect(loadEnv({ ...base, DEV_ROUTES: 'true' }).DEV_ROUTES).toBe(true)
    expect(() => loadEnv({ ...base, DEV_ROUTES: 'sometimes' })).toThrow(/DEV_ROUTES/)
  })

  it('RATE_PERIOD must be 10 or 60', () => {
    expect(loadEnv({ ...base, RATE_PERIOD: '10' }).RATE_PERIOD).toBe(10)
    expect(() => loadEnv({ ...base, RATE_PERIOD: '30' })).toThrow(ConfigError)
  })

  it('names the bad variable', () => {
    expect(() => loadEnv({ ...base, RATE_LIMIT: 'lots' })).toThrow(/RATE_LIMIT/)
    expect(() => loadEnv({ ...base, DOMAIN_VERIFICATION: 'maybe' })).toThrow(/DOMAIN_VERIFICATION/)
    expect(() => loadEnv({ ...base, TRACKING_ACK_WAIT_SECONDS: '0' })).toThrow(/TRACKING_ACK_WAIT_SECONDS/)
    expect(() => loadEnv({ ...base, LIST_SCAN_ROWS: '0' })).toThrow(/LIST_SCAN_ROWS/)
  })
})
