import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ensureStream, type Runtime, startRuntime } from '@mailer/bus'
import { ROUTES, STREAMS } from '@mailer/contracts'
import { linksFromEnv } from '@mailer/links'
import { openApiDocument } from '@mailer/openapi'
import express from 'express'
import { dashboardRouter } from './dashboard/index.js'
import type { GatewayEnv } from './env.js'
import { AllowedMethods, withoutAutoOptions } from './http/allowed-methods.js'
import { Authenticator } from './http/authenticate.js'
import { refuseBodyRead } from './http/body-errors.js'
import { bodyTimeout } from './http/body-timeout.js'
import { answerClientErrors, answerExpectations } from './http/client-errors.js'
import { HttpDrain } from './http/drain.js'
import { sendError } from './http/errors.js'
import { httpMetrics } from './http/metrics.js'
import { literalBadEscapes } from './http/path-escapes.js'
import { bodyReader, closeIfBodyUnread, deferContinue } from './http/read-body.js'
import { requestId } from './http/request-id.js'
import { TrackingHits } from './infra/tracking-hits.js'
import { methodNotAllowed, notFound, registerApiRoutes } from './routes/api-routes.js'
import { PUBLIC_LINKS, publicLinksRouter } from './routes/public-links.js'

export const SERVICE = 'gateway'

export interface Gateway {
  rt: Runtime<GatewayEnv>
  port: number
  url: string
  stop(): Promise<void>
}

/** Room for what wraps a body on the bus (caller, params, headers). */
const BUS_ENVELOPE_BYTES = 64 * 1024
/**
 * Node's limit on a whole request, kept: 16 MiB (MAX_BODY_BYTES) in 300 s is about 450 kbit/s.
 * A body that stops arriving is cut sooner (REQUEST_READ_TIMEOUT_SECONDS, body-timeout.ts).
 */
const WHOLE_REQUEST_MS = 300_000

/** Starts the REST gateway: request conventions, auth, forwarding to services over NATS. */
export async function start(env: GatewayEnv): Promise<Gateway> {
  // Ready while NATS is: a database outage is answered by the routes (runtime.ts says why).
  const rt = await startRuntime(SERVICE, env, { dbPoolSize: 2, readyWithoutDb: true })
  // Opens and clicks are published here and consumed by the email service.
  await ensureStream(rt.bus, STREAMS.TRACKING)
  const trackingHits = new TrackingHits(rt.bus, rt.logger, rt.metrics)
  // Runs after the HTTP drain (steps run in reverse): no hit comes in any more, those in flight go out.
  rt.onStop(() => trackingHits.settle())
  const app = express()
  app.disable('x-powered-by')
  // API answers are never revalidated (no If-None-Match on POST /v1/emails): hashing every body
  // for an ETag was CPU spent for nothing. Static dashboard files keep theirs (serve-static).
  app.set('etag', false)
  // A hop count (env.ts): 0 turns X-Forwarded-* off altogether.
  app.set('trust proxy', env.TRUST_PROXY)
  const drain = new HttpDrain()
  app.use(drain.middleware)
  app.use(requestId)
  const requestMetrics = httpMetrics(rt.metrics)
  app.use(requestMetrics.middleware)
  const readMs = env.REQUEST_READ_TIMEOUT_SECONDS * 1000
  // Node checks the headers' time-out every connectionsCheckingInterval (30 s by default, which
  // would double a 30 s limit): every 5 s at most.
  const server = createServer(
    {
      headersTimeout: readMs,
      requestTimeout: WHOLE_REQUEST_MS,
      connectionsCheckingInterval: Math.min(5_000, readMs / 2),
    },
    app,
  )
  server.keepAliveTimeout = 65_000
  // What Node refuses before express (bad request line, oversized headers, time-outs, an
  // unknown Expect): JSON too.
  const refuse = answerClientErrors(server, { logger: rt.logger, count: requestMetrics.refused })
  answerExpectations(server, { logger: rt.logger, count: requestMetrics.refused })
  deferContinue(server)
  app.use(bodyTimeout(readMs, refuse))
  app.use(literalBadEscapes)
  // Bodies are read by the routes that take one, once the caller is authenticated (read-body.ts):
  // read here, every request held up to MAX_BODY_BYTES before any key was looked at.
  const readBody = bodyReader(env.MAX_BODY_BYTES)

  app.get('/health', async (_req, res) => {
    const ok = await rt.checkDb()
    res.status(ok ? 200 : 503).json({ ok })
  })

  // A body the NATS server cannot carry fails with 413 instead of being accepted: say so at start.
  if (rt.bus.maxPayload < env.MAX_BODY_BYTES + BUS_ENVELOPE_BYTES)
    rt.logger.warn(
      { maxPayload: rt.bus.maxPayload, maxBodyBytes: env.MAX_BODY_BYTES },
      "NATS max_payload is below MAX_BODY_BYTES: larger requests get 413 payload_too_large; raise the server's max_payload (docs/operations.md)",
    )

  const auth = new Authenticator(rt.bus, env.ADMIN_API_KEY, {
    timeoutMs: env.AUTH_TIMEOUT_MS,
    staleGraceMs: env.AUTH_STALE_GRACE_SECONDS * 1000,
    logger: rt.logger,
    metrics: rt.metrics,
  })
  // Built once per process, here at start rather than in a request; served to any working key.
  const openapi = openApiDocument()
  app.get('/openapi.json', async (req, res) => {
    try {
      await auth.anyKey(req)
      res.json(openapi)
    } catch (e) {
      sendError(res, e, rt.logger, req.requestId)
    }
  })
  const router = express.Router()
  const served = registerApiRoutes(router, ROUTES, {
    bus: rt.bus,
    auth,
    logger: rt.logger,
    timeoutMs: env.UPSTREAM_TIMEOUT_MS,
    readBody,
  })
  app.use(withoutAutoOptions(router))
  // Public tracking and unsubscribe links: no key, HTML/GIF/redirect answers, not in the catalog.
  app.use(
    withoutAutoOptions(
      publicLinksRouter({
        bus: rt.bus,
        links: linksFromEnv(env),
        logger: rt.logger,
        metrics: rt.metrics,
        hits: trackingHits,
        timeoutMs: env.UPSTREAM_TIMEOUT_MS,
        maxBodyBytes: env.MAX_BODY_BYTES,
      }),
    ),
  )

  // The operator dashboard: its web app, sign-in, and the admin API behind its session.
  if (env.DASHBOARD_ENABLED) {
    const deps = {
      env,
      routes: ROUTES,
      bus: rt.bus,
      db: rt.db,
      auth,
      logger: rt.logger,
      metrics: rt.metrics,
      onStop: rt.onStop,
      readBody,
    }
    app.use(await dashboardRouter(deps))
  }

  // A known path with another method (OPTIONS too) is 405 with Allow; anything else is 404.
  const allowed = new AllowedMethods([
    { path: '/health', method: 'GET' },
    { path: '/openapi.json', method: 'GET' },
    ...PUBLIC_LINKS,
    ...served,
  ])
  app.use(async (req, res) => {
    const allow = allowed.allow(req.path)
    if (allow) res.setHeader('Allow', allow)
    const err = allow ? methodNotAllowed(req.method) : notFound()
    await closeIfBodyUnread(req, res)
    sendError(res, err, rt.logger, req.requestId)
  })
  // Anything thrown by middleware (body read failures are answered by the routes, readBody).
  app.use((err: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const e = err as { type?: string; code?: string; status?: number }
    if (e?.status && e.status < 500) {
      sendError(res, refuseBodyRead(res, e, env.MAX_BODY_BYTES), rt.logger, req.requestId)
    } else {
      sendError(res, err, rt.logger, req.requestId)
    }
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(env.PORT, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  // Drain: stop accepting connections, let in-flight requests finish (closing their connections
  // after them), then the bus drains.
  rt.onStop(() => drain.close(server))
  rt.started()
  rt.logger.info({ port }, 'gateway listening')
  return { rt, port, url: `http://127.0.0.1:${port}`, stop: () => rt.stop() }
}
