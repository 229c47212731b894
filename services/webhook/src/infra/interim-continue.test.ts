import { createServer as createHttpServer } from 'node:http'
import { createServer, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpSender } from './http-sender.js'

const headers = { 'Content-Type': 'application/json' }
let sender: HttpSender
let close: () => Promise<void>

afterEach(async () => {
  await sender?.close()
  await close?.()
})

/** A receiver writing `parts` as they are, 10 ms apart, to every request (one per connection). */
async function rawReceiver(parts: string[]): Promise<string> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.once('data', async () => {
      for (const part of parts) {
        if (socket.destroyed) return
        socket.write(part)
        await new Promise((r) => setTimeout(r, 10))
      }
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  close = async () => {
    for (const s of sockets) s.destroy()
    await new Promise((r) => server.close(r))
  }
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
}

const ok = (body: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`

describe('HttpSender and interim answers', () => {
  it('skips a 100 Continue that arrives a few bytes at a time', async () => {
    const url = await rawReceiver([...'HTTP/1.1 100 Continue\r\n\r\n'.match(/.{1,3}/gs)!, ok('fine')])
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    expect(await sender.post(url, '{}', headers)).toEqual({
      outcome: 'success',
      responseCode: 200,
      responseBody: 'fine',
    })
  })

  it('skips an HTTP/1.0 100 with headers, and leaves a 103 Early Hints to undici', async () => {
    const url = await rawReceiver([
      'HTTP/1.0 100 Continue\r\nX-Why: because\r\n\r\n',
      'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n',
      'HTTP/1.1 429 Too Many Requests\r\nContent-Length: 4\r\n\r\nslow',
    ])
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    expect(await sender.post(url, '{}', headers)).toEqual({
      outcome: 'failure',
      responseCode: 429,
      responseBody: 'slow',
    })
  })

  it('skips the 100 a node:http receiver sends with writeContinue(), on one kept-alive connection', async () => {
    let connections = 0
    const server = createHttpServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeContinue()
        setTimeout(() => res.writeHead(202).end('queued'), 10)
      })
    })
    server.on('connection', () => connections++)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    close = async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
    sender = new HttpSender({ timeoutMs: 5_000, allowPrivate: true })
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
    for (let i = 0; i < 3; i++)
      expect(await sender.post(url, '{}', headers)).toEqual({
        outcome: 'success',
        responseCode: 202,
        responseBody: 'queued',
      })
    expect(connections).toBe(1)
  })

  it('still fails a receiver whose interim head never ends, at the time-out', async () => {
    const url = await rawReceiver([
      'HTTP/1.1 100 Continue\r\n',
      ...Array.from({ length: 30 }, () => 'X-More: yes\r\n'),
    ])
    sender = new HttpSender({ timeoutMs: 600, allowPrivate: true })
    expect(await sender.post(url, '{}', headers)).toEqual({
      outcome: 'timeout',
      responseCode: null,
      responseBody: 'timeout after 0.6s',
    })
  })
})
