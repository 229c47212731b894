import { adminEmailRoutes } from './admin-emails.js'
import { analyticsRoutes } from './analytics.js'
import { audienceRoutes } from './audiences.js'
import { authRoutes } from './auth.js'
import { broadcastRoutes } from './broadcasts.js'
import { contactRoutes } from './contacts.js'
import type { RouteDef } from './define.js'
import { domainRoutes } from './domains.js'
import { emailRoutes } from './emails.js'
import { eventRoutes } from './events.js'
import { suppressionRoutes } from './suppressions.js'
import { templateRoutes } from './templates.js'
import { webhookRoutes } from './webhooks.js'

export type { HttpMethod, RouteDef } from './define.js'
export { route } from './define.js'

/** Every REST route the gateway serves, in registration order (specific paths before params). */
export const ROUTES: RouteDef[] = [
  ...authRoutes,
  ...analyticsRoutes,
  ...webhookRoutes,
  ...eventRoutes,
  ...emailRoutes,
  ...adminEmailRoutes,
  ...domainRoutes,
  ...suppressionRoutes,
  ...templateRoutes,
  ...contactRoutes,
  ...audienceRoutes,
  ...broadcastRoutes,
]
