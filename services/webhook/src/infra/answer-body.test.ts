import { brotliCompressSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { answerBytes } from './answer-body.js'

const text = (b: Buffer | string) => (typeof b === 'string' ? b : b.toString('utf8'))

describe('answerBytes', () => {
  const page = 'Service Unavailable: the queue is full, try again later. '.repeat(200)
  it('keeps a body without a coding, or an empty one, as it is', async () => {
    expect(text(await answerBytes(undefined, Buffer.from('plain'), true, 4096))).toBe('plain')
    expect(text(await answerBytes('identity', Buffer.from('plain'), true, 4096))).toBe('plain')
    expect(text(await answerBytes('gzip', Buffer.alloc(0), true, 4096))).toBe('')
  })
  it('decodes no more than asked, and the start of an answer that was cut off', async () => {
    const gz = gzipSync(page)
    expect(text(await answerBytes('gzip', gz, true, 100))).toBe(page.slice(0, 100))
    const cut = gz.subarray(0, Math.floor(gz.length / 2))
    expect(page.startsWith(text(await answerBytes('gzip', cut, false, 4096)))).toBe(true)
    expect(text(await answerBytes(['br'], brotliCompressSync(page), true, 4096))).toBe(page.slice(0, 4096))
  })
  it('keeps the decoded start of an answer that turns corrupt', async () => {
    const gz = gzipSync(page)
    const broken = Buffer.concat([gz.subarray(0, gz.length - 8), Buffer.from('garbage!')])
    expect(text(await answerBytes('gzip', broken, true, 4096))).toBe(page.slice(0, 4096))
  })
  it('names the coding and size of what it does not decode', async () => {
    const body = Buffer.from([1, 2, 3, 4])
    expect(await answerBytes('zstd', body, true, 4096)).toBe('[zstd-encoded body, 4 bytes]')
    expect(await answerBytes('zstd', body, false, 4096)).toBe('[zstd-encoded body, 4+ bytes]')
    expect(await answerBytes('gzip, br', body, true, 4096)).toBe('[gzip, br-encoded body, 4 bytes]')
    expect(await answerBytes(['gzip', 'br'], body, true, 4096)).toBe('[gzip, br-encoded body, 4 bytes]')
    expect(await answerBytes('br', body, true, 4096)).toBe('[br-encoded body that does not decode, 4 bytes]')
  })
})
