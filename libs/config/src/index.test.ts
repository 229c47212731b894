import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { baseEnv, ConfigError, envBool, parseEnv } from './index.js'

describe('parseEnv', () => {
  const schema = baseEnv.extend({ FLAG: envBool(false) })
  it('applies defaults and treats empty strings as unset', () => {
    const env = parseEnv(schema, { DATABASE_URL: 'postgres://x@h/db', NATS_PREFIX: '', FLAG: 'true' })
    expect(env).toMatchObject({
      NATS_URL: 'nats://127.0.0.1:4222',
      NATS_PREFIX: '',
      LOG_LEVEL: 'info',
      FLAG: true,
      METRICS_PORT: 9464,
    })
  })
  it('refuses a NATS_URL login that is not percent-encoded, without echoing it', () => {
    const parse = (NATS_URL: string) => parseEnv(schema, { DATABASE_URL: 'postgres://x@h/db', NATS_URL })
    expect(parse('nats://mailer:p%25ss@nats:4222').NATS_URL).toBe('nats://mailer:p%25ss@nats:4222')
    expect(parse('nats://a:4222,nats://tok@b:4222').NATS_URL).toBe('nats://a:4222,nats://tok@b:4222')
    try {
      parse('nats://mailer:50%off@nats:4222')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      expect((e as ConfigError).variables).toEqual(['NATS_URL'])
      expect((e as Error).message).not.toContain('50%off')
    }
  })

  it('names every bad variable', () => {
    try {
      parseEnv(schema.extend({ RATE_PERIOD: z.coerce.number().refine((n) => n === 10 || n === 60) }), {
        DATABASE_URL: 'mysql://nope',
        METRICS_PORT: 'abc',
        RATE_PERIOD: '30',
      })
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError)
      expect((e as ConfigError).variables).toEqual(
        expect.arrayContaining(['DATABASE_URL', 'METRICS_PORT', 'RATE_PERIOD']),
      )
      expect((e as Error).message).toContain('DATABASE_URL')
    }
  })
  it('takes NATS_STREAM_REPLICAS as 1, 3 or 5, and leaves it unset by default', () => {
    const base = { DATABASE_URL: 'postgres://x@h/db' }
    expect(parseEnv(schema, base).NATS_STREAM_REPLICAS).toBeUndefined()
    expect(parseEnv(schema, { ...base, NATS_STREAM_REPLICAS: '3' }).NATS_STREAM_REPLICAS).toBe(3)
    for (const bad of ['2', '0', 'three']) {
      expect(() => parseEnv(schema, { ...base, NATS_STREAM_REPLICAS: bad })).toThrow(/NATS_STREAM_REPLICAS/)
    }
  })
})
