import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ClaimNotHeld, FileRelay } from '../src/infra/relay.js'

const dirs: string[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

// The file transport's rename is its final dot: it is fenced by the claim as the SMTP one is.
describe('file transport fenced by the claim', () => {
  it('writes no .eml (and leaves nothing behind) when the claim may no longer be ours', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'outbox-'))
    dirs.push(dir)
    const relay = new FileRelay(dir)
    const envelope = { from: 'a@sender.test', to: ['b@x.test'] }
    await expect(
      relay.deliver('email_1', envelope, Buffer.from('x\r\n'), () => false),
    ).rejects.toBeInstanceOf(ClaimNotHeld)
    expect(await readdir(dir)).toEqual([])
    const [reply] = await relay.deliver('email_2', envelope, Buffer.from('x\r\n'), () => true)
    expect(reply?.code).toBe(250)
    expect(await readdir(dir)).toEqual(['email_2.eml'])
  })
})
