import type { Metrics } from '@mailer/observability'
import type { NextFunction, Request, Response } from 'express'

/** Requests by route pattern (never the raw URL: bounded labels), method and status. */
export function httpMetrics(metrics: Metrics) {
  const total = metrics.counter('http_requests_total', 'HTTP requests answered', [
    'route',
    'method',
    'status',
  ])
  const seconds = metrics.histogram('http_request_seconds', 'HTTP request latency', ['route', 'method'])
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint()
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched'
      const labels = { route, method: req.method }
      total.inc({ ...labels, status: String(res.statusCode) })
      seconds.observe(labels, Number(process.hrtime.bigint() - start) / 1e9)
    })
    next()
  }
}
