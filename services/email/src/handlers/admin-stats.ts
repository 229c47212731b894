import { serveRoutes } from '@mailer/bus'
import type { EmailContext } from '../app.js'
import { buildStats, statsWindows } from '../domain/stats.js'
import { listProjects } from '../infra/projects.js'
import { countByStatus } from '../infra/stats-store.js'

/**
 * `GET /v1/admin/stats`: every project with its emails by status today (UTC), over the last 7
 * and 30 days. One grouped query here; names and slugs from the auth service, side by side.
 */
export function serveAdminStats(ctx: EmailContext): void {
  const { rt } = ctx
  serveRoutes(rt.bus, 'email', {
    'api.email.stats': async ({ caller }) => {
      const [projects, counts] = await Promise.all([
        listProjects(rt.bus, caller),
        countByStatus(rt.db, statsWindows(new Date())),
      ])
      return { data: buildStats(projects, counts) }
    },
  })
}
