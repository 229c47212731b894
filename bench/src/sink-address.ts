/**
 * Where the bench's sinks listen and are announced: loopback unless BENCH_SINK_HOST says otherwise
 * (a Mailer started elsewhere, measured with BASE_URL, must be able to reach them).
 */
export const SINK_HOST = process.env.BENCH_SINK_HOST ?? '127.0.0.1'

/** A sink's listening address: SINK_HOST, on the port `portVariable` names (0: a free one). */
export function listenAddress(portVariable: string): { host: string; port: number } {
  return { host: SINK_HOST, port: Number(process.env[portVariable] ?? 0) }
}
