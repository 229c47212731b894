/**
 * Every NATS subject, stream and durable consumer in one place. Subjects are lower-case and
 * dotted; stream names UPPER_SNAKE; durables `<service>-<purpose>`. A published subject is
 * never renamed: add a new one. Every name is prefixed at run time by `NATS_PREFIX` (empty in
 * production; tests use it to keep runs apart).
 */
export const SUBJECTS = {
  /** gateway → auth, request-reply: verify a key hash. */
  authVerify: 'auth.verify',
  /** any → auth, request-reply: project by slug. */
  authResolveProject: 'auth.project.resolve',
  /** auth → every auth replica, core pub/sub: drop cached keys/projects. */
  authInvalidate: 'auth.invalidate',
  /** email → EMAILS stream: the emails one write made ready (DispatchMessage). */
  emailDispatch: 'emails.dispatch',
  /**
   * any → EVENTS stream: `events.<event type>` for one event (e.g. `events.email.delivered`), or
   * `events.group` for the events one write recorded together (EventGroupMessage).
   */
  eventPrefix: 'events',
  eventGroup: 'events.group',
  /** webhook replicas, core pub/sub: a webhook changed, drop cached webhook lists. */
  webhookInvalidate: 'webhook.invalidate',
  /** email → every email replica, core pub/sub: a project's domains changed, drop cached sender domains. */
  domainsInvalidate: 'domains.invalidate',
  /**
   * gateway → TRACKING stream: `tracking.open` / `tracking.click`, one hit on a public tracking
   * link (TrackingHit, msgID = the hit's id). Replaced the request-reply `email.track.open` /
   * `email.track.click`, which lost every hit the email service could not answer at that moment.
   */
  trackingPrefix: 'tracking',
  /** gateway → broadcast, request-reply: one-click unsubscribe (`UnsubscribeRequest` → `UnsubscribeReply`). */
  contactsUnsubscribe: 'contacts.unsubscribe',
  /** broadcast → email, request-reply: the project's send allowance now (`SendAllowanceRequest` → `SendAllowance`). */
  emailAllowance: 'email.allowance',
  /** email → every email replica, core pub/sub: a template changed, drop its compiled copy. */
  templatesInvalidate: 'templates.invalidate',
  /** gateway → every gateway replica, core pub/sub: a dashboard session signed out (`{ sid, expiresAt }`). */
  dashboardSignout: 'dashboard.signout',
} as const

export const eventSubject = (type: string): string => `${SUBJECTS.eventPrefix}.${type}`
export const trackingSubject = (kind: 'open' | 'click'): string => `${SUBJECTS.trackingPrefix}.${kind}`

const DAY_SECONDS = 86_400

export const STREAMS = {
  EMAILS: { name: 'EMAILS', subjects: [SUBJECTS.emailDispatch], description: 'Emails ready for delivery' },
  EVENTS: { name: 'EVENTS', subjects: [`${SUBJECTS.eventPrefix}.>`], description: 'Every email event' },
  /**
   * Opens and clicks on their way to the email service. A work queue (one consumer; a hit is gone
   * once recorded), so what it holds is only a backlog: hits waiting while no email replica
   * consumes. That backlog is bounded: hits older than 3 days are dropped (an outage that long is
   * handled by hand anyway), and past 1 GiB (some 2-3 million hits) the stream refuses new ones,
   * which the gateway counts as lost (`tracking_record_failures_total`) rather than dropping
   * older hits unseen. The byte limit is set when the stream is created: an operator's own is kept.
   */
  TRACKING: {
    name: 'TRACKING',
    subjects: [`${SUBJECTS.trackingPrefix}.>`],
    description: 'Opens and clicks waiting to be recorded',
    workQueue: true,
    maxAgeSeconds: 3 * DAY_SECONDS,
    maxBytesAtCreation: 1024 ** 3,
    discardNew: true,
  },
} as const

export const CONSUMERS = {
  dispatcherSend: 'dispatcher-send',
  webhookFanout: 'webhook-fanout',
  analyticsIngest: 'analytics-ingest',
  emailTracking: 'email-tracking',
} as const

/** Public RPC subjects for in-cluster callers (contract.md part 6). */
export const RPC = {
  mailer: {
    send: 'rpc.mailer.send',
    sendBatch: 'rpc.mailer.sendBatch',
    get: 'rpc.mailer.get',
    list: 'rpc.mailer.list',
    cancel: 'rpc.mailer.cancel',
  },
  adminPrefix: 'rpc.admin',
} as const
