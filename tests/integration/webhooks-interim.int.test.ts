import { createServer, type Server, type Socket } from 'node:net'
import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { listDeliveries } from '../support/webhooks.js'

// Receivers that send an interim `100 Continue` nobody asked for (we send no `Expect`) before
// their real answer: some frameworks and proxies always do. Node's own HTTP client skips it.
const servers: RawReceiver[] = []
const { client } = useStack(['auth', 'webhook', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '500' },
  after: () => Promise.all(servers.map((s) => s.close())),
})

/**
 * A TCP server that reads each request (headers, then a Content-Length body) and answers it by
 * writing `parts` as they are, a few milliseconds apart (so an interim answer and the final one
 * arrive in separate reads), keeping the connection open.
 */
class RawReceiver {
  requests = 0
  connections = 0
  private readonly server: Server
  private readonly sockets = new Set<Socket>()

  constructor(private readonly parts: string[]) {
    this.server = createServer((socket) => {
      this.connections++
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
      socket.on('error', () => undefined)
      let buffered = ''
      socket.on('data', async (chunk) => {
        buffered += chunk.toString('latin1')
        const end = buffered.indexOf('\r\n\r\n')
        if (end < 0) return
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
        if (buffered.length < end + 4 + length) return
        buffered = buffered.slice(end + 4 + length)
        this.requests++
        for (const part of this.parts) {
          if (socket.destroyed) return
          socket.write(part)
          await new Promise((r) => setTimeout(r, 20))
        }
      })
    })
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r))
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise((r) => this.server.close(r))
  }
}

let n = 0
/** A webhook to a raw receiver answering with `parts`, and a way to send it a test event. */
async function webhookTo(parts: string[]) {
  const receiver = new RawReceiver(parts)
  servers.push(receiver)
  const p = await createProject(client, `interim-${++n}`)
  const wh = await client.post('/v1/webhooks', p.live, { url: await receiver.listen() })
  expect(wh.status).toBe(201)
  const send = async () => {
    const test = await client.post(`/v1/webhooks/${wh.body.id}/test`, p.live)
    expect(test.status).toBe(202)
    return waitFor(
      async () =>
        (await listDeliveries(client, p.live, wh.body.id)).find(
          (d) => d.id === test.body.deliveryId && d.responseBody !== null,
        ),
      { what: 'the attempt to be recorded' },
    )
  }
  return { receiver, send }
}

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n'

describe('an unsolicited 100 Continue before the answer', () => {
  it('is skipped: the final answer is the attempt’s status, and the receiver gets one request', async () => {
    const { receiver, send } = await webhookTo([
      `${CONTINUE}HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: keep-alive\r\n\r\nreceived`,
    ])
    expect(await send()).toMatchObject({
      status: 'success',
      attempt: 1,
      responseCode: 200,
      responseBody: 'received',
    })
    expect(receiver.requests).toBe(1)
  })

  it('is skipped when it comes on its own, and more than once, before a failure', async () => {
    const { receiver, send } = await webhookTo([
      CONTINUE,
      'HTTP/1.1 100 Continue\r\nX-Note: still here\r\n\r\n',
      'HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\ndown',
    ])
    expect(await send()).toMatchObject({
      status: 'pending',
      attempt: 1,
      responseCode: 503,
      responseBody: 'down',
    })
    expect(receiver.requests).toBe(1)
  })

  it('leaves the connection for the next delivery, and a body that quotes one intact', async () => {
    const body = `${CONTINUE}is what I sent`
    const { receiver, send } = await webhookTo([
      CONTINUE,
      `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`,
    ])
    for (let i = 0; i < 3; i++) expect(await send()).toMatchObject({ status: 'success', responseBody: body })
    expect(receiver.requests).toBe(3)
    expect(receiver.connections).toBe(1)
  })
})
