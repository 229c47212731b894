import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import express, { type Request, type Response, Router } from 'express'

/**
 * Where the built dashboard is: `DASHBOARD_DIR`, else `services/gateway/dashboard/dist` found from
 * this file (in src/dashboard when run with tsx, in dist/ when bundled into dist/main.js).
 */
export function findDashboardDir(configured: string | undefined): string | null {
  const here = import.meta.dirname
  const candidates = configured
    ? [configured]
    : [join(here, '..', '..', 'dashboard', 'dist'), join(here, '..', 'dashboard', 'dist')]
  return candidates.find((d) => existsSync(join(d, 'index.html'))) ?? null
}

/**
 * The `<base href>` for a page path below /dashboard/, relative so that it holds behind an
 * ingress that mounts the gateway under its own prefix: `/dashboard/emails/x` → `../`.
 * Only slashes are counted: nothing of the request reaches the page.
 */
export function relativeBase(pathBelowDashboard: string): string {
  const depth = pathBelowDashboard.split('/').length - 1
  return depth <= 0 ? './' : '../'.repeat(depth)
}

/**
 * Serves the built single-page app under /dashboard: hashed assets cached for a year, every other
 * GET answered with index.html (client-side routes), with a relative `<base href>` so that its
 * relative asset and API URLs resolve from any depth.
 */
export function staticRouter(dir: string | null): Router {
  const router = Router()
  const index = dir ? readFileSync(join(dir, 'index.html'), 'utf8') : null

  // `/dashboard` → `/dashboard/` with a relative Location, which also holds behind a path prefix.
  router.get('/dashboard', (req, res, next) => {
    if (req.path !== '/dashboard') return next() // the router also matches `/dashboard/`
    const q = req.originalUrl.indexOf('?')
    res.redirect(308, `dashboard/${q === -1 ? '' : req.originalUrl.slice(q)}`)
  })

  if (dir) {
    router.use(
      '/dashboard/assets',
      express.static(join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false }),
    )
    router.use('/dashboard', express.static(dir, { index: false, maxAge: '1h' }))
  }

  const page = (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-cache')
    if (!index) {
      res
        .status(503)
        .type('text/plain')
        .send('The dashboard is not built: run `pnpm --filter @mailer/dashboard build` (or `make build`).')
      return
    }
    const rest = req.path.slice('/dashboard/'.length)
    res.type('html').send(index.replace('<head>', `<head><base href="${relativeBase(rest)}">`))
  }
  // An asset that is not there (an old tab after a deploy) must not get the page as script.
  router.use('/dashboard/assets', (_req, res) => {
    res.status(404).type('text/plain').send('Not found')
  })
  router.get(/^\/dashboard\/(?!api\/|api$).*/, page)
  return router
}
