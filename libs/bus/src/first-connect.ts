import { connect as tcpConnect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { NatsTls } from '@mailer/config'
import { type ConnectionOptions, connect, ErrorCode, type NatsConnection, NatsError } from 'nats'
import { clientCertRequired, connectProblem } from './connect-problems.js'

export type FirstConnectOptions = Omit<ConnectionOptions, 'servers'> & { servers: string[] }

/**
 * The service's connection, once a server can be reached: one that cannot yet (starting too, or
 * down) is waited for as long as it takes, `onWait` hearing of each failed try; a problem waiting
 * will not fix (connectProblem: a refused login, an untrusted certificate, …) is thrown as the
 * ConfigError naming the setting. The client's own waitOnFirstConnect would retry those for ever
 * without a word, so each try is a connection of its own without it, closed at once. The
 * service's connection is then made with waitOnFirstConnect, which keeps every server of
 * NATS_URL in its pool (a try drops the servers it could not reach from its own).
 */
export async function connectWhenReachable(
  options: FirstConnectOptions,
  onWait: (err: unknown) => void,
): Promise<NatsConnection> {
  const tls = options.tls ?? undefined
  for (;;) {
    const failure = await tryOnce(options, tls)
    if (failure === undefined) break
    onWait(failure)
    await sleep(options.reconnectTimeWait ?? 500)
  }
  return connect({ ...options, waitOnFirstConnect: true })
}

/** Undefined when a server took the connection; the error to wait out otherwise. */
async function tryOnce(options: FirstConnectOptions, tls: NatsTls | undefined): Promise<unknown> {
  try {
    const nc = await connect({ ...options, waitOnFirstConnect: false, reconnect: false })
    await nc.close()
    return undefined
  } catch (err) {
    const problem = connectProblem(err, tls)
    if (problem) throw problem
    // A server that verifies client certificates refuses a client without one after the TLS
    // handshake (TLS 1.3), which the client only sees as a timeout; its greeting says so.
    const refused = err instanceof NatsError && err.code === ErrorCode.ConnectionRefused
    if (!refused && !tls?.certFile && !tls?.handshakeFirst) {
      const server = await verifyingServer(options.servers)
      if (server) throw clientCertRequired(`the NATS server at ${server} closed the connection`)
    }
    return err
  }
}

/** The first of `servers` whose INFO greeting has `tls_verify` (it wants client certificates). */
export async function verifyingServer(servers: string[]): Promise<string | undefined> {
  for (const server of servers) {
    const info = await greeting(server).catch(() => undefined)
    if (info?.tls_verify === true) return server
  }
  return undefined
}

/** The INFO a NATS server sends first, in clear (unless it is set to handshake_first). */
function greeting(server: string, timeoutMs = 5_000): Promise<{ tls_verify?: boolean } | undefined> {
  const url = new URL(server.includes('://') ? server : `nats://${server}`)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port: Number(url.port || 4222), timeout: timeoutMs })
    let text = ''
    const done = (v: { tls_verify?: boolean } | undefined) => {
      socket.destroy()
      resolve(v)
    }
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1')
      const end = text.indexOf('\r\n')
      if (end < 0 && text.length < 64 * 1024) return
      const line = text.slice(0, end < 0 ? text.length : end)
      try {
        done(line.startsWith('INFO ') ? JSON.parse(line.slice(5)) : undefined)
      } catch {
        done(undefined)
      }
    })
    socket.on('timeout', () => done(undefined))
    socket.on('error', () => done(undefined))
    socket.on('close', () => done(undefined))
  })
}
