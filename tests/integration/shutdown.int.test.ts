import { waitFor } from '@mailer/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { email, projectWithDomain } from '../support/emails.js'
import { api } from '../support/http.js'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { useStack } from '../support/use-stack.js'

/**
 * SIGTERM as Kubernetes sends it, to the real service process while it has work in flight: what
 * it accepted is answered and kept, nothing gets a 500, and the process exits 0 on its own.
 */
const { stack, client } = useStack(['auth', 'gateway'], {
  overrides: { UPSTREAM_TIMEOUT_MS: '5000' },
  timeout: 90_000,
})
const children: SpawnedService[] = []

beforeAll(async () => {
  children.push(await spawnService('email', stack.env({ RATE_LIMIT: '100000' })))
}, 90_000)
afterAll(async () => {
  for (const c of children) await c.kill()
})

const exitCode = (s: SpawnedService) =>
  new Promise<number | null>((resolve) =>
    s.proc.exitCode !== null ? resolve(s.proc.exitCode) : s.proc.once('exit', (code) => resolve(code)),
  )

describe('graceful shutdown', () => {
  it('the email service answers the sends in flight at SIGTERM, keeps what it accepted and exits 0', async () => {
    const p = await projectWithDomain(client, 'drain')
    const first = children[0]!
    // Steady load from a few clients; SIGTERM lands while sends are in flight.
    const results: Array<{ status: number; body: any }> = []
    let stop = false
    let n = 0
    const clientLoop = async () => {
      while (!stop) {
        results.push(await client.post('/v1/emails', p.live, email(p.from, { to: `r${n++}@example.com` })))
      }
    }
    const loops = Array.from({ length: 6 }, clientLoop)
    await waitFor(() => results.filter((r) => r.status === 202).length >= 20, { what: 'sends accepted' })
    first.proc.kill('SIGTERM')
    const code = await exitCode(first)
    stop = true
    await Promise.all(loops)
    expect(code).toBe(0)
    const statuses = results.map((r) => r.status)
    expect(statuses.filter((s) => s !== 202 && s !== 503)).toEqual([])
    // Only 503s (no replica left to answer: safe to retry) besides the 202s; a new process reads
    // back every email that got one.
    children.push(await spawnService('email', stack.env({ RATE_LIMIT: '100000' })))
    for (const r of results.filter((r) => r.status === 202)) {
      const got = await client.get(`/v1/emails/${r.body.id}`, p.live)
      expect(got.status).toBe(200)
    }
  })
})

describe('gateway shutdown', () => {
  it('the gateway answers the requests on kept-alive connections at SIGTERM, closes those connections and exits 0', async () => {
    const p = await projectWithDomain(client, 'drain-gw')
    const gw = await spawnService('gateway', stack.env({ PORT: '0' }))
    children.push(gw)
    const port = Number(gw.logs.find((l) => typeof l.port === 'number')?.port)
    const gwClient = api(`http://127.0.0.1:${port}`)
    // Clients on kept-alive connections (fetch keeps them), like an ingress or an SDK under load.
    // Each goes elsewhere once this pod says `Connection: close`, as a load balancer whose
    // endpoints no longer list it does.
    const outcomes: string[] = []
    let closedBy = 0
    const loop = async () => {
      for (;;) {
        try {
          const r = await gwClient.post('/v1/emails', p.live, email(p.from))
          outcomes.push(String(r.status))
          if (r.headers.get('connection') === 'close') {
            closedBy++
            return
          }
        } catch (e) {
          outcomes.push(String((e as { cause?: { code?: string } }).cause?.code ?? e))
          return
        }
      }
    }
    const loops = Array.from({ length: 4 }, loop)
    await waitFor(() => outcomes.length >= 20, { what: 'requests answered' })
    gw.proc.kill('SIGTERM')
    expect(await exitCode(gw)).toBe(0)
    await Promise.all(loops)
    expect(outcomes.filter((o) => o !== '202')).toEqual([])
    expect(closedBy).toBe(4)
  })
})
