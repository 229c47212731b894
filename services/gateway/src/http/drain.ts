import type { Server, ServerResponse } from 'node:http'
import type { NextFunction, Request, Response } from 'express'

/**
 * Graceful close of the API's HTTP server. `server.close()` alone stops new connections but keeps
 * serving kept-alive ones for as long as their clients send (an SDK or a proxy always does under
 * load), so the drain ran until SHUTDOWN_TIMEOUT_SECONDS and the forced exit cut requests in
 * flight. Here, once draining, every response says `Connection: close` (the client opens its next
 * request elsewhere: the Service no longer routes here) and each connection closes after the
 * response it is serving, so the drain ends soon after the requests in flight do.
 */
export class HttpDrain {
  private draining = false
  private readonly inFlight = new Set<ServerResponse>()

  /** First middleware of the app. */
  readonly middleware = (_req: Request, res: Response, next: NextFunction): void => {
    if (this.draining) res.setHeader('Connection', 'close')
    else {
      this.inFlight.add(res)
      res.once('close', () => this.inFlight.delete(res))
    }
    next()
  }

  /**
   * Resolves once every connection is closed (requests in flight answered). The listener stays
   * open for `graceMs` first: `server.close()` drops the connections idle at that instant, and a
   * client may be sending its next request on one just then (it would see the socket reset). Over
   * the grace every busy client gets a response with `Connection: close` instead, so what is
   * idle after it is idle for real.
   */
  async close(server: Server, graceMs = 1_000): Promise<void> {
    this.draining = true
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close')
    await new Promise((resolve) => setTimeout(resolve, graceMs))
    // A response whose headers went out before the drain keeps its connection, idle once it is
    // sent: those are closed as they go idle.
    const sweep = setInterval(() => server.closeIdleConnections(), 250)
    await new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeIdleConnections()
    })
    clearInterval(sweep)
  }
}
