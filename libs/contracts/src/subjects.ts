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
  /** gateway → email, request-reply: an open-pixel hit (`TrackOpenRequest` → `TrackReply`). */
  emailTrackOpen: 'email.track.open',
  /** gateway → email, request-reply: a tracked-link click (`TrackClickRequest` → `TrackReply`). */
  emailTrackClick: 'email.track.click',
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

export const STREAMS = {
  EMAILS: { name: 'EMAILS', subjects: [SUBJECTS.emailDispatch], description: 'Emails ready for delivery' },
  EVENTS: { name: 'EVENTS', subjects: [`${SUBJECTS.eventPrefix}.>`], description: 'Every email event' },
} as const

export const CONSUMERS = {
  dispatcherSend: 'dispatcher-send',
  webhookFanout: 'webhook-fanout',
  analyticsIngest: 'analytics-ingest',
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
