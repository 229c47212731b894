import { createSocket, type Socket } from 'node:dgram'
import type { AddressInfo } from 'node:net'
import * as dnsPacket from 'dns-packet'

/**
 * A tiny authoritative DNS responder on 127.0.0.1 (UDP) for tests: TXT queries are answered from
 * `txt`, a map the test changes at will (name → records, each record one string). Unknown names
 * get NXDOMAIN, known names asked for another type get an empty answer (NODATA).
 */
export class TestDnsServer {
  readonly txt = new Map<string, string[]>()
  private constructor(private readonly socket: Socket) {}

  static async start(): Promise<TestDnsServer> {
    const socket = createSocket('udp4')
    const server = new TestDnsServer(socket)
    socket.on('message', (msg, rinfo) => {
      const reply = server.answer(msg)
      if (reply) socket.send(reply, rinfo.port, rinfo.address)
    })
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject)
      socket.bind(0, '127.0.0.1', () => resolve())
    })
    return server
  }

  /** `127.0.0.1:<port>`, the form DNS_SERVERS takes. */
  get address(): string {
    return `127.0.0.1:${(this.socket.address() as AddressInfo).port}`
  }

  /** Publishes records at `name` (replacing what was there). */
  set(name: string, records: string[]): void {
    this.txt.set(name.toLowerCase(), records)
  }

  private answer(msg: Buffer): Buffer | null {
    let query: dnsPacket.Packet
    try {
      query = dnsPacket.decode(msg)
    } catch {
      return null
    }
    const q = query.questions?.[0]
    if (!q) return null
    const records = this.txt.get(q.name.toLowerCase())
    const answers: dnsPacket.Answer[] =
      q.type === 'TXT' && records
        ? records.map((r) => ({ type: 'TXT', name: q.name, ttl: 0, class: 'IN', data: chunks(r) }))
        : []
    return dnsPacket.encode({
      id: query.id,
      type: 'response',
      // Authoritative answer, recursion desired/available echoed; rcode NXDOMAIN for unknown names.
      flags:
        dnsPacket.AUTHORITATIVE_ANSWER |
        dnsPacket.RECURSION_DESIRED |
        dnsPacket.RECURSION_AVAILABLE |
        (records ? 0 : 3),
      questions: [q],
      answers,
    })
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()))
  }
}

/** A TXT string holds at most 255 bytes; longer records (DKIM keys) go as several strings. */
function chunks(record: string): string[] {
  const out: string[] = []
  for (let i = 0; i < record.length; i += 255) out.push(record.slice(i, i + 255))
  return out.length ? out : ['']
}
