import { ConfigError } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { loadEnv } from './env.js'

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }

describe('webhook env', () => {
  it('defaults to the contract schedule, a 10 s timeout and no private hosts', () => {
    const env = loadEnv(base)
    expect(env.WEBHOOK_RETRY_SCHEDULE_SECONDS).toEqual([30, 120, 600, 1800, 3600, 10_800, 21_600, 43_200])
    expect(env.WEBHOOK_TIMEOUT_MS).toBe(10_000)
    expect(env.WEBHOOK_ALLOW_PRIVATE).toBe(false)
    expect(env.WEBHOOK_ENDPOINT_CONCURRENCY).toBe(4)
    expect(env.WEBHOOK_DELIVERY_RETENTION_DAYS).toBe(30)
    expect(env.WEBHOOK_PRUNE_INTERVAL_SECONDS).toBe(3600)
    // Well within the gateway's 10 s for the whole request.
    expect(env.WEBHOOK_CLEANUP_WAIT_MS).toBe(2_000)
    // A killed replica's events go to another one within seconds (heartbeats keep slow ones).
    expect(env.WEBHOOK_FANOUT_ACK_WAIT_SECONDS).toBe(10)
    // A filtered event list reads at most this many rows per request.
    expect(env.LIST_SCAN_ROWS).toBe(20_000)
  })

  it('parses a short schedule and the flags', () => {
    const env = loadEnv({
      ...base,
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '1, 1,2.5',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_TIMEOUT_MS: '1500',
    })
    expect(env.WEBHOOK_RETRY_SCHEDULE_SECONDS).toEqual([1, 1, 2.5])
    expect(env.WEBHOOK_ALLOW_PRIVATE).toBe(true)
    expect(env.WEBHOOK_TIMEOUT_MS).toBe(1500)
  })

  it('names the variable when a value is bad', () => {
    for (const [k, v] of [
      ['WEBHOOK_RETRY_SCHEDULE_SECONDS', '1,,2'],
      ['WEBHOOK_RETRY_SCHEDULE_SECONDS', '0'],
      ['WEBHOOK_TIMEOUT_MS', 'soon'],
      ['WEBHOOK_ALLOW_PRIVATE', 'maybe'],
      ['WEBHOOK_FANOUT_ACK_WAIT_SECONDS', '0'],
      ['WEBHOOK_CLEANUP_WAIT_MS', '9000'],
      ['LIST_SCAN_ROWS', '0'],
      // Not longer than the EVENTS stream keeps events (7 days): an event redelivered from it
      // would find no delivery and be delivered again.
      ['WEBHOOK_DELIVERY_RETENTION_DAYS', '7'],
    ] as const) {
      try {
        loadEnv({ ...base, [k]: v })
        expect.unreachable(`${k}=${v} should fail`)
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError)
        expect((e as ConfigError).variables).toContain(k)
      }
    }
  })
})
