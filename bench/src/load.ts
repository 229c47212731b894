import autocannon from 'autocannon'

export interface LoadResult {
  connections: number
  seconds: number
  /** Answers with a 2xx status, per second. */
  okPerSecond: number
  latencyMs: { p50: number; p99: number; max: number }
  /** Non-2xx answers, socket errors and time-outs. */
  errors: number
  statuses: Record<string, number>
}

export interface LoadSpec {
  url: string
  key: string
  connections: number
  seconds: number
  body: unknown
  /** Requests per second over all connections (open-ish loop); unset: as fast as answered. */
  rate?: number
  /** Called with every answer (status, body text) as it arrives. */
  onResponse?: (status: number, body: string) => void
}

/**
 * Runs autocannon (HTTP/1.1 keep-alive, `connections` concurrent clients, each sending its next
 * request when the previous one is answered) for a fixed time against one JSON POST route.
 */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  const headers = { authorization: `Bearer ${spec.key}`, 'content-type': 'application/json' }
  const body = JSON.stringify(spec.body)
  const statuses: Record<string, number> = {}
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 10,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    requests: [
      {
        method: 'POST',
        headers,
        body,
        onResponse: (status: number, resBody: string) => {
          statuses[status] = (statuses[status] ?? 0) + 1
          spec.onResponse?.(status, resBody)
        },
      },
    ],
  })
  const ok = result['2xx']
  return {
    connections: spec.connections,
    seconds: spec.seconds,
    okPerSecond: ok / result.duration,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    errors: result.non2xx + result.errors + result.timeouts,
    statuses,
  }
}

/** The p-th percentile (0-100) of `values` (nearest rank); NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}
