import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { useStack } from '../support/use-stack.js'
import { listDeliveries, projectWithReceiver, type Reply } from '../support/webhooks.js'

// What a delivery stores of its receiver's answer, as the API shows it (the dashboard shows the same).
const { client, receivers } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '500' },
})

let n = 0
/** The delivery of a test event once its first attempt, answered as `reply` says, is recorded. */
async function firstAttempt(reply: Reply) {
  const { p, wh } = await projectWithReceiver(client, `answers-${++n}`, receivers, () => reply)
  expect((await client.post(`/v1/webhooks/${wh.id}/test`, p.live)).status).toBe(202)
  return waitFor(
    async () => {
      const [d] = await listDeliveries(client, p.live, wh.id)
      return d?.responseCode ? d : null
    },
    { what: 'the first attempt to be recorded' },
  )
}

/**
 * A brotli stream of (middle + 2) × 128 MiB of the letter `a`, 101 bytes per 128 MiB: the stream
 * brotli (quality 3, 16 MiB window) writes for 384 MiB of them is a first part, a middle part that
 * can be repeated (it ends on a byte boundary and only copies what came before), and a last part.
 */
function brotliBomb(middle: number): Buffer {
  const unit = (end: string) =>
    `cfffff7f002000e2b00074effff9ffff0f0004401c1680eefd3fffffff01800088c302d0bdffe7ffff3f00100071580` +
    `0baf7fffcffff070002200e0b40f7fe9fffffff004000c46101e8defff3ffff1f000880382c00ddfb${end}`
  const first = unit('7ffeffff030001108705a07bff').replace('002000e2b00074ef', '0020c2e2b14072ef')
  return Buffer.from(
    first + unit('7ffeffff030001108705a07bff').repeat(middle) + unit('fffcffff070001108705a07bff0f'),
    'hex',
  )
}

describe('an answer with a Content-Encoding', () => {
  const page = JSON.stringify({ error: 'database unavailable', detail: 'é'.repeat(40), retry: true })
  it.each([
    ['gzip', 'gzip', gzipSync(page)],
    ['x-gzip', 'x-gzip', gzipSync(page)],
    ['br', 'br', brotliCompressSync(page)],
    ['deflate', 'deflate', deflateSync(page)],
    ['deflate sent raw (no zlib header)', 'deflate', deflateRawSync(page)],
    ['gzip after identity', 'identity, GZIP', gzipSync(page)],
  ])('in %s is stored decoded, as the receiver wrote it', async (_, coding, body) => {
    const d = await firstAttempt({
      status: 500,
      body,
      headers: { 'content-type': 'application/json', 'content-encoding': coding },
    })
    expect(d).toMatchObject({ responseCode: 500, responseBody: page })
  })

  it('is cut at 1,024 characters once decoded, however far it expands (4 KiB of brotli making 5 GiB)', async () => {
    const bomb = brotliBomb(38)
    expect(bomb.length).toBeLessThan(8192)
    const d = await firstAttempt({ status: 503, body: bomb, headers: { 'content-encoding': 'br' } })
    expect(d).toMatchObject({ responseCode: 503, responseBody: 'a'.repeat(1024) })
  })

  it('in a coding it does not decode, or that does not decode, is stored as a placeholder', async () => {
    const zstd = await firstAttempt({
      status: 502,
      body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 1, 2]),
      headers: { 'content-encoding': 'zstd' },
    })
    expect(zstd).toMatchObject({ responseCode: 502, responseBody: '[zstd-encoded body, 7 bytes]' })
    const corrupt = await firstAttempt({
      status: 500,
      body: Buffer.from('not gzip at all'),
      headers: { 'content-encoding': 'gzip' },
    })
    expect(corrupt.responseBody).toBe('[gzip-encoded body that does not decode, 15 bytes]')
  })

  it('on a success is stored decoded too', async () => {
    const d = await firstAttempt({
      status: 200,
      body: gzipSync('received'),
      headers: { 'content-encoding': 'gzip' },
    })
    expect(d).toMatchObject({ status: 'success', responseCode: 200, responseBody: 'received' })
  })
})
