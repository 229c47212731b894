import { ConfigError } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { loadEnv } from './env.js'

const base = { DATABASE_URL: 'postgres://u@localhost:5432/db' }

describe('analytics env', () => {
  it('has batching and retention defaults', () => {
    const env = loadEnv(base)
    expect(env).toMatchObject({
      ANALYTICS_BATCH_SIZE: 200,
      ANALYTICS_BATCH_WAIT_MS: 50,
      ANALYTICS_DEDUPE_RETENTION_DAYS: 14,
      ANALYTICS_PRUNE_INTERVAL_SECONDS: 3600,
      ANALYTICS_MAX_DIMENSION_VALUES: 1000,
      ANALYTICS_ACK_WAIT_SECONDS: 10,
    })
  })

  it('parses overrides and treats empty strings as unset', () => {
    const env = loadEnv({ ...base, ANALYTICS_BATCH_SIZE: '50', ANALYTICS_BATCH_WAIT_MS: '' })
    expect(env.ANALYTICS_BATCH_SIZE).toBe(50)
    expect(env.ANALYTICS_BATCH_WAIT_MS).toBe(50)
  })

  it('names the offending variable', () => {
    expect(() => loadEnv({ ...base, ANALYTICS_BATCH_SIZE: '0' })).toThrow(/ANALYTICS_BATCH_SIZE/)
    expect(() => loadEnv({ ...base, ANALYTICS_DEDUPE_RETENTION_DAYS: '3' })).toThrow(ConfigError)
    expect(() => loadEnv({ ...base, ANALYTICS_DEDUPE_RETENTION_DAYS: '3' })).toThrow(
      /ANALYTICS_DEDUPE_RETENTION_DAYS/,
    )
    expect(() => loadEnv({ ...base, ANALYTICS_MAX_DIMENSION_VALUES: '5' })).toThrow(
      /ANALYTICS_MAX_DIMENSION_VALUES/,
    )
    expect(() => loadEnv({ ...base, ANALYTICS_ACK_WAIT_SECONDS: '0' })).toThrow(/ANALYTICS_ACK_WAIT_SECONDS/)
    expect(() => loadEnv({})).toThrow(/DATABASE_URL/)
  })
})
