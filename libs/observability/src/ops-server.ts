import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import type { Registry } from 'prom-client'

export interface OpsServerOptions {
  port: number
  /**
   * Address to listen on. Unset: Node's default, `::` (every IPv6 and IPv4 address) where the
   * host has IPv6, else 0.0.0.0, as the gateway's API port does. It used to default to 0.0.0.0,
   * which left the probes and /metrics unreachable on an IPv6 single-stack (or IPv6-first
   * dual-stack) cluster: every probe failed.
   */
  host?: string
  registry: Registry
  /** Readiness: every dependency this service needs answers. */
  ready: () => Promise<boolean>
  logger: Logger
}

export interface OpsServer {
  port: number
  /** From now on /readyz answers 503 so load balancers stop sending work (start of drain). */
  markDraining(): void
  close(): Promise<void>
}

/**
 * `/metrics` (Prometheus), `/livez` (the event loop answers) and `/readyz` (dependencies
 * answer and the service is not draining), on their own port so they never sit behind the
 * API's auth or ingress.
 */
export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  let draining = false
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    try {
      if (path === '/metrics') {
        const body = await opts.registry.metrics()
        res.writeHead(200, { 'content-type': opts.registry.contentType })
        res.end(body)
      } else if (path === '/livez') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('{"ok":true}')
      } else if (path === '/readyz') {
        const ok = !draining && (await opts.ready())
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ ok, draining }))
      } else {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end('{"ok":false}')
      }
    } catch (err) {
      opts.logger.error({ err }, 'ops endpoint failed')
      res.writeHead(500).end()
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    // An undefined host in the options is Node's unspecified address (see `host`).
    server.listen({ port: opts.port, host: opts.host }, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  return {
    port,
    markDraining: () => {
      draining = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}
