import type { ComponentType } from 'react'
import { Page } from './components/ui.js'
import { Link, matchRoute, useLocation } from './lib/router.js'
import { AnalyticsPage } from './pages/analytics.js'
import { AudiencesPage } from './pages/audiences.js'
import { BroadcastPage } from './pages/broadcast.js'
import { BroadcastsPage } from './pages/broadcasts.js'
import { ContactsPage } from './pages/contacts.js'
import { DomainsPage } from './pages/domains.js'
import { EmailPage } from './pages/email.js'
import { EmailsPage } from './pages/emails.js'
import { ProjectPage } from './pages/project.js'
import { ProjectsPage } from './pages/projects.js'
import { SuppressionsPage } from './pages/suppressions.js'
import { TemplatePage } from './pages/template.js'
import { TemplatesPage } from './pages/templates.js'
import { WebhookPage } from './pages/webhook.js'
import { WebhooksPage } from './pages/webhooks.js'

type Params = Record<string, string>

/** Every page, by path relative to the dashboard root. */
const ROUTES: [string, ComponentType<{ params: Params }>][] = [
  ['', ProjectsPage],
  ['projects', ProjectsPage],
  ['projects/:slug', ProjectPage],
  ['projects/:slug/webhooks', WebhooksPage],
  ['projects/:slug/webhooks/:id', WebhookPage],
  ['projects/:slug/templates', TemplatesPage],
  ['projects/:slug/templates/:name', TemplatePage],
  ['projects/:slug/contacts', ContactsPage],
  ['projects/:slug/audiences', AudiencesPage],
  ['projects/:slug/broadcasts', BroadcastsPage],
  ['projects/:slug/broadcasts/:id', BroadcastPage],
  ['emails', EmailsPage],
  ['emails/:id', EmailPage],
  ['domains', DomainsPage],
  ['suppressions', SuppressionsPage],
  ['analytics', AnalyticsPage],
]

function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no such page. <Link to="projects">Go to projects</Link>.
      </p>
    </Page>
  )
}

export function Routes() {
  const { path } = useLocation()
  for (const [pattern, Component] of ROUTES) {
    const params = matchRoute(pattern, path)
    // `key` remounts a page when its parameters change, so no state leaks between records.
    if (params) return <Component key={`${pattern}:${JSON.stringify(params)}`} params={params} />
  }
  return <NotFound />
}
