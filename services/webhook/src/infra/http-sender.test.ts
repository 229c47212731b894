import { createServer as createHttpsServer } from 'node:https'
import { createServer, type Server, type Socket } from 'node:net'
import selfsigned from 'selfsigned'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpSender } from './http-sender.js'

/**
 * A raw HTTP/1.1 receiver over TCP, to see connections as the sender uses them: it answers 204
 * with keep-alive, and can be told to drop the next request that arrives on a connection it has
 * already answered on (what a receiver closing an idle connection looks like to the sender).
 */
class RawReceiver {
  connections = 0
  answered = 0
  dropReused = false
  private readonly server: Server
  private readonly sockets = new Set<Socket>()

  constructor() {
    this.server = createServer((socket) => {
      this.connections++
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
      socket.on('error', () => undefined)
      let servedHere = 0
      let buffered = ''
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1')
        // One small request per write in these tests: headers, then a Content-Length body.
        for (;;) {
          const end = buffered.indexOf('\r\n\r\n')
          if (end < 0) return
          const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0)
          if (buffered.length < end + 4 + length) return
          buffered = buffered.slice(end + 4 + length)
          if (servedHere > 0 && this.dropReused) {
            this.dropReused = false
            socket.destroy()
            return
          }
          servedHere++
          this.answered++
          socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n')
        }
      })
    })
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r))
    const { port } = this.server.address() as { port: number }
    return `http://127.0.0.1:${port}/hook`
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise((r) => this.server.close(r))
  }
}

const headers = { 'Content-Type': 'application/json' }
let receiver: RawReceiver
let sender: HttpSender

afterEach(async () => {
  sender?.close()
  await receiver?.close()
})

describe('HttpSender connections', () => {
  it('reuses one connection for consecutive deliveries to an endpoint', async () => {
    receiver = new RawReceiver()
    const url = await receiver.listen()
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    for (let i = 0; i < 5; i++) {
      expect(await sender.post(url, `{"n":${i}}`, headers)).toEqual({
        outcome: 'success',
        responseCode: 204,
        responseBody: '',
      })
    }
    expect(receiver.connections).toBe(1)
    expect(receiver.answered).toBe(5)
  })

  it('retries once on a fresh connection when a reused one was closed by the receiver', async () => {
    receiver = new RawReceiver()
    const url = await receiver.listen()
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    expect((await sender.post(url, '{"n":1}', headers)).outcome).toBe('success')
    receiver.dropReused = true
    expect(await sender.post(url, '{"n":2}', headers)).toEqual({
      outcome: 'success',
      responseCode: 204,
      responseBody: '',
    })
    expect(receiver.connections).toBe(2)
    expect(receiver.answered).toBe(2)
  })

  it('refuses a receiver whose TLS certificate it cannot verify, before sending anything', async () => {
    const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
    })
    let hits = 0
    const server = createHttpsServer({ key: pems.private, cert: pems.cert }, (_req, res) => {
      hits++
      res.writeHead(204).end()
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as { port: number }
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    try {
      expect(await sender.post(`https://localhost:${port}/hook`, '{}', headers)).toEqual({
        outcome: 'failure',
        responseCode: null,
        responseBody: 'connection error: DEPTH_ZERO_SELF_SIGNED_CERT',
      })
      expect(hits).toBe(0)
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  })
})
