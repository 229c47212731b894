import { createServer, type Server } from 'node:http'

/** What a receiver got of one event: its type, its email, and how many times it came. */
export interface ReceivedEvent {
  type: string
  emailId: string | null
  count: number
}

/**
 * A webhook endpoint of the fault run: records every event it received (by id, with its type and
 * email, and how often), and can be taken down (its port closed: connections refused) and brought
 * back on the same port.
 */
export class FaultReceiver {
  readonly received = new Map<string, ReceivedEvent>()
  private server: Server | null = null

  constructor(
    readonly port: number,
    /** What its webhook subscribes to (`*` or event types), for the checks. */
    readonly events: string[],
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`
  }

  /** Whether its webhook's filter lets an event of this type through. */
  wants(type: string): boolean {
    return this.events.includes('*') || this.events.includes(type)
  }

  up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        try {
          const e = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            id: string
            type: string
            data?: { emailId?: string }
          }
          const seen = this.received.get(e.id)
          if (seen) seen.count++
          else this.received.set(e.id, { type: e.type, emailId: e.data?.emailId ?? null, count: 1 })
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
    for (const e of this.received.values()) n += e.count - 1
    return n
  }
}
