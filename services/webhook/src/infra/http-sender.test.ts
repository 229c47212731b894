import { createServer as createHttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { createServer, type Server, type Socket } from 'node:net'
import selfsigned from 'selfsigned'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpSender } from './http-sender.js'

/**
 * A raw HTTP/1.1 receiver over TCP, to see connections as the sender uses them: it answers 204
 * with keep-alive, and can be told how to fail the next request instead: on a connection it has
 * already answered on, close it (FIN) or reset it (RST), which is what a receiver closing an idle
 * connection looks like to the sender; or, on a fresh connection, read the request and close
 * without answering (a receiver in trouble).
 */
class RawReceiver {
  connections = 0
  /** Requests read to their end, answered or not. */
  received = 0
  answered = 0
  authorization: string[] = []
  failNext: 'close-reused' | 'reset-reused' | 'close-fresh' | null = null
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
          const head = buffered.slice(0, end)
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
          if (buffered.length < end + 4 + length) return
          buffered = buffered.slice(end + 4 + length)
          this.received++
          const auth = /^authorization: (.*)$/im.exec(head)?.[1]
          if (auth) this.authorization.push(auth)
          const fail = this.failNext
          if (fail === 'close-fresh' || (fail && servedHere > 0)) {
            this.failNext = null
            if (fail === 'reset-reused') socket.resetAndDestroy()
            else socket.destroy()
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
  await sender?.close()
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

  it.each([
    ['closed', 'close-reused'],
    ['reset', 'reset-reused'],
  ] as const)(
    'sends again once on a fresh connection when a reused one was %s by the receiver',
    async (_, how) => {
      receiver = new RawReceiver()
      const url = await receiver.listen()
      sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
      expect((await sender.post(url, '{"n":1}', headers)).outcome).toBe('success')
      receiver.failNext = how
      expect(await sender.post(url, '{"n":2}', headers)).toEqual({
        outcome: 'success',
        responseCode: 204,
        responseBody: '',
      })
      expect(receiver.connections).toBe(2)
      expect(receiver.answered).toBe(2)
    },
  )

  it('records a fresh connection closed without an answer as a failure, without sending again', async () => {
    receiver = new RawReceiver()
    const url = await receiver.listen()
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    receiver.failNext = 'close-fresh'
    const r = await sender.post(url, '{"n":1}', headers)
    expect(r).toMatchObject({ outcome: 'failure', responseCode: null })
    expect(r.responseBody).toMatch(/^connection error: (UND_ERR_SOCKET|ECONNRESET)$/)
    expect(receiver.received).toBe(1)
  })

  it('sends credentials written in the URL as Basic authorization', async () => {
    receiver = new RawReceiver()
    const url = (await receiver.listen()).replace('http://', 'http://hook%20user:p%40ss@')
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    expect((await sender.post(url, '{}', headers)).outcome).toBe('success')
    expect(receiver.authorization).toEqual([`Basic ${Buffer.from('hook user:p@ss').toString('base64')}`])
  })

  it('reports a TLS handshake that never completes as the time-out, whatever the time-out', async () => {
    // A port that accepts connections and never answers the ClientHello.
    const silent = createServer((socket) => socket.on('error', () => undefined))
    const held = new Set<Socket>()
    silent.on('connection', (s) => held.add(s))
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
    const { port } = silent.address() as { port: number }
    sender = new HttpSender({ timeoutMs: 1_900, allowPrivate: true })
    try {
      // Started at different moments: undici's own connect timer is coarse (half-second ticks).
      const results = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 130))
          return sender.post(`https://127.0.0.1:${port}/hook`, '{}', headers)
        }),
      )
      for (const r of results)
        expect(r).toEqual({ outcome: 'timeout', responseCode: null, responseBody: 'timeout after 1.9s' })
    } finally {
      for (const s of held) s.destroy()
      await new Promise((r) => silent.close(r))
    }
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

  it('keeps a NUL in an answer as U+FFFD, so the attempt stays storable', async () => {
    const server = createHttpServer((_req, res) => res.writeHead(200).end('ok\u0000!'))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as { port: number }
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    try {
      expect(await sender.post(`http://127.0.0.1:${port}/hook`, '{}', headers)).toEqual({
        outcome: 'success',
        responseCode: 200,
        responseBody: 'ok\uFFFD!',
      })
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  })
})

/** A TCP server that answers each connection's first request as `answer` does with the socket. */
async function rawServer(answer: (socket: Socket) => void) {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.once('data', () => answer(socket))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((r) => server.close(r))
    },
  }
}

/** Writes `chunk` every few milliseconds until the socket goes. */
const trickle = (socket: Socket, chunk: string) => {
  const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(chunk)), 20)
}

describe('HttpSender answers', () => {
  it('takes a 2xx whose body never ends as the success it is, once the time-out ends the attempt', async () => {
    const server = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
      trickle(socket, '1\r\nx\r\n')
    })
    // 2 s: the headers must come within it, which a stalled event loop made them miss at 600 ms.
    // The body never ends, so the time-out still ends the attempt.
    sender = new HttpSender({ timeoutMs: 2_000, allowPrivate: true })
    try {
      const r = await sender.post(server.url, '{}', headers)
      expect(r).toMatchObject({ outcome: 'success', responseCode: 200 })
      expect(r.responseBody).toMatch(/^x+$/)
    } finally {
      await server.close()
    }
  })

  it('reports headers that never end as the time-out', async () => {
    const server = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\n')
      trickle(socket, 'X-More: yes\r\n')
    })
    sender = new HttpSender({ timeoutMs: 600, allowPrivate: true })
    try {
      expect(await sender.post(server.url, '{}', headers)).toEqual({
        outcome: 'timeout',
        responseCode: null,
        responseBody: 'timeout after 0.6s',
      })
    } finally {
      await server.close()
    }
  })

  it('reads an enormous answer no further than it keeps: the first 1,024 characters', async () => {
    let written = 0
    const server = await rawServer((socket) => {
      socket.write('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1073741824\r\n\r\n')
      const mib = Buffer.alloc(1 << 20, 'a')
      const more = () => {
        while (!socket.destroyed && written < 1 << 30 && socket.write(mib)) written += mib.length
        if (!socket.destroyed) socket.once('drain', more)
      }
      more()
    })
    sender = new HttpSender({ timeoutMs: 30_000, allowPrivate: true })
    try {
      expect(await sender.post(server.url, '{}', headers)).toEqual({
        outcome: 'failure',
        responseCode: 500,
        responseBody: 'a'.repeat(1024),
      })
      // The connection was closed long before the gigabyte was written.
      expect(written).toBeLessThan(64 << 20)
    } finally {
      await server.close()
    }
  })

  it('keeps the first 1,024 characters whole: a character outside the BMP at the cut is kept, not halved', async () => {
    const answer = `${'a'.repeat(1023)}😀 and more`
    const server = createHttpServer((_req, res) => res.writeHead(503).end(answer))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const { port } = server.address() as { port: number }
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    try {
      // Cut between the two halves of its UTF-16 pair, the lone half was stored as U+FFFD.
      expect(await sender.post(`http://127.0.0.1:${port}/hook`, '{}', headers)).toEqual({
        outcome: 'failure',
        responseCode: 503,
        responseBody: `${'a'.repeat(1023)}😀`,
      })
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  })
})
