import { ConfigError } from '@mailer/config'
import { describe, expect, it } from 'vitest'
import { loadEnv } from './env.js'

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }

describe('broadcast env', () => {
  it('defaults to a five-minute resume, chunks of 100 and a 15-second lease', () => {
    const env = loadEnv(base)
    expect(env.BROADCAST_RESUME_SECONDS).toBe(300)
    expect(env.BROADCAST_CHUNK_SIZE).toBe(100)
    expect(env.BROADCAST_LEASE_SECONDS).toBe(15)
    expect(env.PUBLIC_URL).toBe('http://localhost:3000')
  })

  it('recounts broadcast emails every 5 s while recent, then at most daily', () => {
    const env = loadEnv(base)
    expect(env.BROADCAST_COUNTS_REFRESH_MS).toBe(5_000)
    expect(env.BROADCAST_COUNTS_RECENT_SECONDS).toBe(3_600)
    expect(env.BROADCAST_COUNTS_MAX_INTERVAL_SECONDS).toBe(86_400)
  })

  it('takes fractional seconds for tests', () => {
    const env = loadEnv({ ...base, BROADCAST_RESUME_SECONDS: '0.5', BROADCAST_LEASE_SECONDS: '1.5' })
    expect(env.BROADCAST_RESUME_SECONDS).toBe(0.5)
    expect(env.BROADCAST_LEASE_SECONDS).toBe(1.5)
  })

  it('names the variable when a value is bad', () => {
    for (const [k, v] of [
      ['BROADCAST_CHUNK_SIZE', '101'],
      ['BROADCAST_RESUME_SECONDS', 'soon'],
      ['BROADCAST_COUNTS_REFRESH_MS', '5'],
      ['PUBLIC_URL', 'ftp://x'],
      ['TRACKING_SECRET', 'short'],
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
