import { type Caller, isMailerError, MailerError, requireProject } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import type { Links } from '@mailer/links'
import { type CompiledTemplate, compileTemplate } from '@mailer/templating'
import { type BroadcastSendInput, type ContactForSend, personalize } from '../domain/personalize.js'
import type { BroadcastRow } from '../domain/records.js'
import { firstAudienceContact } from './broadcast-store.js'
import type { EmailClient } from './email-client.js'

/** Errors of the dry run that say nothing about the broadcast itself. */
const NOT_THE_BROADCAST = new Set([
  'recipient_suppressed',
  'rate_limited',
  'daily_limit_exceeded',
  'idempotency_payload_mismatch',
])

// Stands in for the first contact of an audience that has none yet.
const PLACEHOLDER: ContactForSend = {
  id: 'ct_00000000000000000000000000',
  email: 'preview@example.com',
  firstName: 'Preview',
  lastName: 'Contact',
  data: {},
}

/**
 * Before a draft is sent, the email service validates one real email of it without storing
 * anything (`?dryRun=true`): a sender outside the project's verified domains (403
 * `invalid_sender`, param `from`) or anything else its checks refuse fails the send request
 * instead of every contact's email. Render problems of one contact's data do not count, but
 * they never skip the check either (see dryRunItem).
 */
export async function checkSendable(
  deps: { db: Db; client: EmailClient; links: Links; maxMessageBytes: number },
  caller: Caller,
  b: BroadcastRow,
): Promise<void> {
  const project = requireProject(caller)
  const first = await firstAudienceContact(deps.db, project.id, b.audienceId)
  const item = dryRunItem(b, first, deps.maxMessageBytes, (c) => deps.links.unsubscribeUrl(project.id, c.id))
  const sender = {
    apiKeyId: caller.via === 'api' ? caller.apiKeyId : null,
    mode: caller.mode,
    projectSlug: project.slug,
    id: b.id,
  }
  const [result] = await deps.client.sendBatch(
    deps.client.callerFor(sender, project, caller.requestId),
    [item],
    { dryRun: true },
  )
  if (result && 'error' in result && !NOT_THE_BROADCAST.has(result.error.code)) {
    const e = result.error as { code: string; message?: string; param?: string }
    throw new MailerError(
      e.code,
      e.message ?? 'The broadcast cannot be sent',
      e.param === undefined ? {} : { param: e.param },
    )
  }
}

/**
 * The email the dry run validates: the audience's first contact's; when its data does not render
 * (or the audience is empty) the placeholder contact's; when that does not render either (a
 * subject of `{{headline}}` renders empty without one) the template as written, unrendered. A
 * contact whose email renders over MAX_MESSAGE_BYTES counts as one that does not render (the
 * sender skips it too); content too large as written is left to the email service to refuse. What
 * every email shares (`from` above all) is checked whatever the contacts' data: skipped, a draft
 * with an unverified `from` would be accepted and then pause on invalid_sender at every run.
 */
function dryRunItem(
  b: BroadcastRow,
  first: ContactForSend | null,
  maxBytes: number,
  unsubscribeUrl: (c: ContactForSend) => string,
): BroadcastSendInput {
  const compiled = compileTemplate(b, { name: `broadcast ${b.id}` })
  const unrendered: CompiledTemplate = {
    render: () => ({ subject: b.subject, html: b.html, text: b.text }),
  }
  for (const contact of first ? [first, PLACEHOLDER] : [PLACEHOLDER]) {
    try {
      return personalize(b, compiled, contact, unsubscribeUrl(contact), maxBytes)
    } catch (err) {
      if (!isMailerError(err)) throw err
    }
  }
  return personalize(b, unrendered, PLACEHOLDER, unsubscribeUrl(PLACEHOLDER), Number.POSITIVE_INFINITY)
}
