import type { Metrics } from '@mailer/observability'
import type { NextFunction, Request, Response } from 'express'

/**
 * Requests by route pattern (never the raw URL: bounded labels), method and status. `refused`
 * counts what Node's HTTP server answered before express saw a request (client-errors.ts), as
 * route `unparsed`, method `unknown`: there is no route, and the method may be the garbage.
 */
export function httpMetrics(metrics: Metrics) {
  const total = metrics.counter('http_requests_total', 'HTTP requests answered', [
    'route',
    'method',
    'status',
  ])
  const seconds = metrics.histogram('http_request_seconds', 'HTTP request latency', ['route', 'method'])
  const middleware = (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint()
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched'
      const labels = { route, method: req.method }
      total.inc({ ...labels, status: String(res.statusCode) })
      seconds.observe(labels, Number(process.hrtime.bigint() - start) / 1e9)
    })
    next()
  }
  const refused = (status: number) => {
    total.inc({ route: 'unparsed', method: 'unknown', status: String(status) })
  }
  return { middleware, refused }
}
