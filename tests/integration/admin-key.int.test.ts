import { AdminClient } from '@mailer/client'
import { describe, expect, it } from 'vitest'
import { api } from '../support/http.js'
import { ADMIN_KEY, Stack } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'

// The admin key as the operator sets it (ADMIN_API_KEY): unset, written with a trailing newline,
// of any characters. Each test starts a gateway of its own with that setting, in front of one
// auth service.
const { te, stack } = useStack(['auth'])

describe('admin key unset', () => {
  it('every admin call fails with 401 invalid_api_key when ADMIN_API_KEY is not configured', async () => {
    const other = new Stack(te, { ADMIN_API_KEY: '' })
    await other.start('gateway')
    try {
      const r = await api(other.gatewayUrl).get('/v1/admin/projects', '')
      expect(r.body.error.code).toBe('missing_api_key')
      const r2 = await api(other.gatewayUrl).get('/v1/admin/projects', 'anything')
      expect(r2.status).toBe(401)
      expect(r2.body.error.code).toBe('invalid_api_key')
    } finally {
      await other.stopAll()
    }
  })

  it('an ADMIN_API_KEY with a line break or spaces around it (a Secret made from a file) still works', async () => {
    // No HTTP header can carry the newline, so compared as written no admin call could ever pass.
    const other = new Stack(te, { ADMIN_API_KEY: ` ${ADMIN_KEY}\n` })
    await other.start('gateway')
    try {
      const r = await api(other.gatewayUrl).get('/v1/admin/projects', ADMIN_KEY)
      expect(r.status).toBe(200)
      const signIn = await fetch(`${other.gatewayUrl}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: other.gatewayUrl },
        body: JSON.stringify({ key: `${ADMIN_KEY}\n` }),
      })
      expect(signIn.status).toBe(200)
    } finally {
      await other.stopAll()
    }
  })

  it('an admin key of any characters works as curl sends it (UTF-8 bytes in the header)', async () => {
    const key = 'clé secrète ñ 😀 de l’administrateur'
    const other = new Stack(te, { ADMIN_API_KEY: key })
    await other.start('gateway')
    try {
      // Node hands header bytes over one character per byte: this string is the bytes curl sends.
      const asSent = (k: string) => Buffer.from(k, 'utf8').toString('latin1')
      const r = await api(other.gatewayUrl).get('/v1/admin/projects', asSent(key))
      expect(r.status).toBe(200)
      // The SDK (and so the CLI) sends it the same way.
      const sdk = new AdminClient({ baseUrl: other.gatewayUrl, adminKey: key, maxRetries: 0 })
      expect((await sdk.projects.list()).data).toBeInstanceOf(Array)
      const wrong = await api(other.gatewayUrl).get(
        '/v1/admin/projects',
        asSent('clé secrète ñ 😀 de l’administrateuR'),
      )
      expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_api_key'])
      const latin1Key = 'clé-de-l-administrateur-latin1'
      const latin1 = new Stack(te, { ADMIN_API_KEY: latin1Key })
      await latin1.start('gateway')
      try {
        // A client writing the key's characters as single bytes (Node's fetch does) still matches.
        expect((await api(latin1.gatewayUrl).get('/v1/admin/projects', latin1Key)).status).toBe(200)
        expect((await api(latin1.gatewayUrl).get('/v1/admin/projects', asSent(latin1Key))).status).toBe(200)
      } finally {
        await latin1.stopAll()
      }
    } finally {
      await other.stopAll()
    }
  })

  it('an ADMIN_API_KEY of nothing but spaces stops the gateway naming it', async () => {
    const { loadEnv } = await import('@mailer/gateway/env')
    expect(() => loadEnv(stack.env({ ADMIN_API_KEY: ' \n' }))).toThrow(/ADMIN_API_KEY: must not be blank/)
  })

  it('an ADMIN_API_KEY shorter than 24 characters stops the gateway naming the rule', async () => {
    const { loadEnv } = await import('@mailer/gateway/env')
    // Counted in characters, not bytes or UTF-16 units: 23 emoji are 92 bytes, and too few.
    for (const key of ['admin', 'x'.repeat(23), '😀'.repeat(23)])
      expect(() => loadEnv(stack.env({ ADMIN_API_KEY: key }))).toThrow(
        /ADMIN_API_KEY: must be at least 24 characters/,
      )
    expect(loadEnv(stack.env({ ADMIN_API_KEY: ` ${'😀'.repeat(24)}\n` })).ADMIN_API_KEY).toBe('😀'.repeat(24))
  })
})
