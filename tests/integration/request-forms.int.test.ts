import { request } from 'node:http'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'

// What a client's bytes and header lines look like on the wire, beyond what fetch sends: a header
// repeated on two lines (fetch joins them into one), a body that is not UTF-8, a byte order mark.
const { stack, client } = useStack(['auth', 'webhook', 'gateway'])

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: any
}

/** One request with `headers` as given: an array value goes out as that many header lines. */
function send(
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${stack.gatewayUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: text ? JSON.parse(text) : undefined,
        })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const json = { 'content-type': 'application/json' }

describe('Authorization on more than one header line', () => {
  it('is 401 invalid_api_key, never the first key taken: a live and a test key together act as neither', async () => {
    const p = await createProject(client, 'twice')
    const both = await send('GET', '/v1/me', { authorization: [`Bearer ${p.live}`, `Bearer ${p.test}`] })
    expect([both.status, both.body.error?.type, both.body.error?.code]).toEqual([
      401,
      'authentication_error',
      'invalid_api_key',
    ])
    expect(both.body.error.message).toContain('more than once')
    expect(both.body.error.message).not.toContain(p.live)
    // A send with both would have been real (the live key came first): nothing is accepted.
    const webhook = await send(
      'POST',
      '/v1/webhooks',
      { ...json, authorization: [`Bearer ${p.live}`, `Bearer ${p.test}`] },
      Buffer.from(JSON.stringify({ url: 'https://example.com/hook' })),
    )
    expect([webhook.status, webhook.body.error?.code]).toEqual([401, 'invalid_api_key'])
    expect((await client.get('/v1/webhooks', p.live)).body.data).toEqual([])
    // The same key twice, and the admin key twice, are refused the same way.
    const same = await send('GET', '/v1/me', { authorization: [`Bearer ${p.live}`, `Bearer ${p.live}`] })
    expect([same.status, same.body.error?.code]).toEqual([401, 'invalid_api_key'])
    const admin = await send('GET', '/v1/admin/projects', {
      authorization: [`Bearer ${client.admin}`, `Bearer ${client.admin}`],
    })
    expect([admin.status, admin.body.error?.code]).toEqual([401, 'invalid_api_key'])
    // One line works as ever.
    const once = await send('GET', '/v1/me', { authorization: `Bearer ${p.test}` })
    expect([once.status, once.body.key?.mode]).toEqual([200, 'test'])
  })
})

describe('no Bearer key', () => {
  it('is 401 missing_api_key saying what was wrong, without quoting the header', async () => {
    const p = await createProject(client, 'scheme')
    const answer = async (authorization?: string) => {
      const r = await client.get('/v1/me', null, authorization === undefined ? {} : { authorization })
      expect([r.status, r.body.error?.code], authorization).toEqual([401, 'missing_api_key'])
      expect(r.body.error.message, authorization).not.toContain(p.live)
      return r.body.error.message
    }
    expect(await answer()).toBe('Missing API key: send Authorization: Bearer <API_KEY>')
    // The key without its scheme, or under another scheme, as Basic or Token habits send it.
    const scheme =
      'Missing API key: Authorization must use the Bearer scheme, as Authorization: Bearer <API_KEY>'
    expect(await answer(p.live)).toBe(scheme)
    expect(await answer(`Basic ${Buffer.from(`${p.live}:`).toString('base64')}`)).toBe(scheme)
    expect(await answer(`Token ${p.live}`)).toBe(scheme)
    expect(await answer('Bearer   ')).toBe('Missing API key: Authorization: Bearer is followed by no key')
  })
})

describe('the admin key on a project route', () => {
  it('is 401 invalid_api_key, saying where the admin key works', async () => {
    const admin = await client.get('/v1/me', client.admin)
    expect([admin.status, admin.body.error?.type, admin.body.error?.code]).toEqual([
      401,
      'authentication_error',
      'invalid_api_key',
    ])
    expect(admin.body.error.message).toBe(
      'The admin key works only on /v1/admin routes; act on a project at /v1/admin/projects/:slug/..., or send a project API key',
    )
    // Any other token that is no key is told no more than before.
    const other = await client.get('/v1/me', 'not-the-admin-key')
    expect([other.status, other.body.error?.code, other.body.error?.message]).toEqual([
      401,
      'invalid_api_key',
      'Invalid API key',
    ])
  })
})

describe('body bytes', () => {
  const admin = { ...json, authorization: `Bearer ${client.admin}` }

  it('a body that is not UTF-8 is 400 invalid_body and nothing is stored, whatever charset is named', async () => {
    // `café` in Latin-1: the é is one byte 0xE9, which no UTF-8 text holds there.
    const latin1 = Buffer.concat([
      Buffer.from('{"slug":"latin","name":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ])
    for (const contentType of ['application/json', 'application/json; charset=iso-8859-1']) {
      const r = await send('POST', '/v1/admin/projects', { ...admin, 'content-type': contentType }, latin1)
      expect([r.status, r.body.error?.type, r.body.error?.code], contentType).toEqual([
        400,
        'validation_error',
        'invalid_body',
      ])
      expect(r.body.error.message).toContain('UTF-8')
    }
    expect((await client.get('/v1/admin/projects/latin', client.admin)).status).toBe(404)
    // The same name in UTF-8 is stored as sent.
    const ok = await send('POST', '/v1/admin/projects', admin, Buffer.from('{"slug":"latin","name":"café"}'))
    expect([ok.status, ok.body.name]).toEqual([201, 'café'])
  })

  it('a leading UTF-8 byte order mark is ignored, as RFC 8259 allows', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    const r = await send(
      'POST',
      '/v1/admin/projects',
      admin,
      Buffer.concat([bom, Buffer.from('{"slug":"bom","name":"B"}')]),
    )
    expect([r.status, r.body.slug, r.body.name]).toEqual([201, 'bom', 'B'])
    // A byte order mark alone is no body.
    const only = await send('POST', '/v1/admin/projects', admin, bom)
    expect([only.status, only.body.error?.code]).toEqual([400, 'missing_body'])
  })

  it('a compressed body is inflated; a coding not taken, or bytes that do not inflate, say so', async () => {
    const body = Buffer.from('{"slug":"zipped","name":"Z"}')
    const gz = await send(
      'POST',
      '/v1/admin/projects',
      { ...admin, 'content-encoding': 'gzip' },
      gzipSync(body),
    )
    expect([gz.status, gz.body.slug]).toEqual([201, 'zipped'])
    const zstd = await send('POST', '/v1/admin/projects', { ...admin, 'content-encoding': 'zstd' }, body)
    expect([zstd.status, zstd.body.error?.code]).toEqual([400, 'invalid_body'])
    expect(zstd.body.error.message).toBe(
      "The request body's Content-Encoding is not supported: send it as is, or with one of gzip, deflate, br",
    )
    expect(zstd.headers['accept-encoding']).toBe('gzip, deflate, br')
    const corrupt = await send('POST', '/v1/admin/projects', { ...admin, 'content-encoding': 'gzip' }, body)
    expect([corrupt.status, corrupt.body.error?.code, corrupt.body.error?.message]).toEqual([
      400,
      'invalid_body',
      'The request body could not be decompressed as its Content-Encoding says',
    ])
  })
})
