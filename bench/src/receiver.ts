import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { listenAddress } from './sink-address.js'

export interface Receipt {
  /** Event creation time (the payload's `createdAt`) and arrival time, ms since epoch. */
  createdAt: number
  at: number
}

/**
 * A local webhook receiver: answers 204 at once and records, per (webhook path, event id), the
 * first arrival. Signatures are not checked here (the webhook tests do that); this measures
 * throughput and lag only.
 */
export class WebhookReceiver {
  readonly receipts = new Map<string, Receipt>()
  duplicates = 0
  private server!: Server
  port = 0

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver()
    r.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const at = Date.now()
        res.writeHead(204).end()
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; createdAt: string }
          const key = `${req.url} ${body.id}`
          if (r.receipts.has(key)) r.duplicates++
          else r.receipts.set(key, { createdAt: Date.parse(body.createdAt), at })
        } catch {
          /* not an event: ignore */
        }
      })
    })
    r.server.keepAliveTimeout = 65_000
    const { port, host } = listenAddress('BENCH_WEBHOOK_PORT')
    await new Promise<void>((resolve) => r.server.listen(port, host, resolve))
    r.port = (r.server.address() as AddressInfo).port
    return r
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`
  }

  stop(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
