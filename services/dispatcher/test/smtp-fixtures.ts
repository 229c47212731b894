// Shared by the SMTP client's tests: a real relay (smtp-server), connection options, a message,
// and what each test opened, closed after it.
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net'
import type { Metrics } from '@mailer/observability'
import pino from 'pino'
import selfsigned from 'selfsigned'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'
import { SmtpRelay } from '../src/infra/relay.js'
import { SmtpConnection, type SmtpOptions } from '../src/infra/smtp/connection.js'

export interface Received {
  from: string
  mailArgs: Record<string, string>
  to: string[]
  raw: string
}

/** What each test opened, closed after it (newest first where a test puts it first). */
export const closers: Array<() => Promise<void>> = []
/** For `afterEach` in every file using these fixtures. */
export async function closeAll(): Promise<void> {
  for (const c of closers.splice(0)) await c()
}

/** A real SMTP relay (npm smtp-server) that records what it accepted and whom it refused. */
export async function relay(extra: Partial<SMTPServerOptions> = {}, refuse: string[] = []) {
  const received: Received[] = []
  let sessions = 0
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 200,
    size: 10 * 1024 * 1024,
    onConnect: (_s, cb) => {
      sessions++
      cb()
    },
    onRcptTo: (a, _s, cb) =>
      cb(
        refuse.includes(a.address)
          ? Object.assign(new Error('5.1.1 No such user'), { responseCode: 550 })
          : null,
      ),
    onData: (stream, session, cb) => {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom
        received.push({
          from: mailFrom ? mailFrom.address : '',
          mailArgs: (mailFrom ? (mailFrom.args as Record<string, string>) : {}) ?? {},
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        cb(null)
      })
    },
    ...extra,
  })
  server.on('error', () => undefined)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const port = (server.server.address() as AddressInfo).port
  return { port, received, sessions: () => sessions }
}

export const opts = (port: number, extra: Partial<SmtpOptions> = {}): SmtpOptions => ({
  host: '127.0.0.1',
  port,
  secure: false,
  timeoutMs: 2_000,
  // The final dot's answer waits as long as the others unless a test says otherwise.
  dataTimeoutMs: extra.timeoutMs ?? 2_000,
  ...extra,
})

/**
 * The dispatcher's relay client for a plain relay on `port`: one session, 2 s time-out, a breaker
 * that opens after 3 failed calls; closed after the test.
 */
export function relayClient(port: number, metrics: Metrics): SmtpRelay {
  const client = new SmtpRelay(
    {
      url: `smtp://127.0.0.1:${port}`,
      starttls: 'offered',
      verifyTls: true,
      poolSize: 1,
      timeoutSeconds: 2,
      dataTimeoutSeconds: 2,
      breaker: { resetSeconds: 60, minCalls: 3 },
    },
    metrics,
    pino({ level: 'silent' }),
  )
  closers.unshift(() => client.close())
  return client
}

export const message = (body = 'Hello\r\n') =>
  Buffer.from(`From: a@sender.test\r\nTo: b@x.test\r\nSubject: hi\r\n\r\n${body}`)

export async function session(o: SmtpOptions): Promise<SmtpConnection> {
  const c = await SmtpConnection.open(o)
  closers.unshift(async () => c.quit())
  return c
}

/** A self-signed certificate for `name`, also as its subject alternative name when `san`. */
export function selfSigned(name: string, san = false) {
  return selfsigned.generate([{ name: 'commonName', value: name }], {
    keySize: 2048,
    algorithm: 'sha256',
    ...(san ? { extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: name }] }] } : {}),
  })
}

/** A scripted relay over plain TCP, for what smtp-server will not do on request. */
export async function scripted(
  onLine: (line: string, socket: Socket, chunk: string) => void,
  greeting = '220 hi',
) {
  const chunks: string[] = []
  const server: Server = createServer((socket) => {
    socket.write(`${greeting}\r\n`)
    let buf = ''
    socket.on('data', (d) => {
      chunks.push(d.toString())
      buf += d.toString()
      for (let i = buf.indexOf('\r\n'); i !== -1; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 2)
        onLine(line, socket, d.toString())
      }
    })
    socket.on('error', () => undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(async () => {
    server.close()
  })
  return { port: (server.address() as AddressInfo).port, chunks }
}
