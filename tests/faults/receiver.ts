import { createServer, type Server } from 'node:http'

/**
 * The webhook endpoint of the fault run: records every event id it received (and how often), and
 * can be taken down (its port closed: connections refused) and brought back on the same port.
 */
export class FaultReceiver {
  readonly received = new Map<string, number>()
  private server: Server | null = null

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`
  }

  up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        try {
          const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }
          this.received.set(id, (this.received.get(id) ?? 0) + 1)
        } catch {
          /* not an event */
        }
        res.writeHead(204).end()
      })
    })
    this.server = server
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
  }

  down(): Promise<void> {
    const s = this.server
    this.server = null
    if (!s) return Promise.resolve()
    s.closeAllConnections()
    return new Promise((resolve) => s.close(() => resolve()))
  }

  /** Deliveries beyond the first per event (allowed: receivers deduplicate by event id). */
  get duplicates(): number {
    let n = 0
    for (const c of this.received.values()) n += c - 1
    return n
  }
}
