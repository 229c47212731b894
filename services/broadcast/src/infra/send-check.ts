import { type Caller, isMailerError, MailerError, requireProject } from '@mailer/contracts'
import type { Db } from '@mailer/db'
import type { Links } from '@mailer/links'
import { compileTemplate } from '@mailer/templating'
import { type ContactForSend, personalize } from '../domain/personalize.js'
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
 * instead of every contact's email. Render problems of one contact's data do not count.
 */
export async function checkSendable(
  deps: { db: Db; client: EmailClient; links: Links },
  caller: Caller,
  b: BroadcastRow,
): Promise<void> {
  const project = requireProject(caller)
  const contact = (await firstAudienceContact(deps.db, project.id, b.audienceId)) ?? PLACEHOLDER
  let item: ReturnType<typeof personalize>
  try {
    item = personalize(
      b,
      compileTemplate(b, { name: `broadcast ${b.id}` }),
      contact,
      deps.links.unsubscribeUrl(project.id, contact.id),
    )
  } catch (err) {
    if (isMailerError(err)) return
    throw err
  }
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
