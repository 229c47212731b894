import {
  asciiDomain,
  fail,
  MAX_RECIPIENTS,
  MailerError,
  parseMailbox,
  type SendEmailInput,
} from '@mailer/contracts'

export type RecipientKind = 'to' | 'cc' | 'bcc'
export interface Recipient {
  address: string
  kind: RecipientKind
}

/** A project's sending domains: lower-case name → verification state. */
export type ProjectDomains = ReadonlyMap<string, string>

/**
 * The sender: `from`, else the project's `defaultFrom`. It must be an address on one of the
 * project's domains (403 `invalid_sender`); a live send also needs that domain verified
 * (403 `domain_not_verified`). Test sends skip only the verification.
 */
export function resolveSender(
  from: string | undefined,
  defaultFrom: string | null,
  domains: ProjectDomains,
  live: boolean,
): string {
  const sender = (from ?? defaultFrom ?? '').trim()
  if (!sender) throw fail('invalid_body', 'from is required (the project has no defaultFrom)', 'from')
  const box = parseMailbox(sender)
  if (!box) throw fail('invalid_body', 'from must be "Name <a@b.c>" or a@b.c', 'from')
  const domain = asciiDomain(box.address.slice(box.address.lastIndexOf('@') + 1))
  const state = domains.get(domain)
  if (state === undefined)
    throw fail('invalid_sender', `${box.address} is not an address on a domain of this project`, 'from')
  if (live && state !== 'verified') {
    throw fail(
      'domain_not_verified',
      `The domain ${domain} is not verified yet; live emails need a verified domain`,
      'from',
    )
  }
  return sender
}

/**
 * to, cc and bcc lower-cased and de-duplicated across all three (the first mention wins), at
 * most 50 in all (`too_many_recipients`, param: the list where the 51st appeared).
 */
export function collectRecipients(input: Pick<SendEmailInput, 'to' | 'cc' | 'bcc'>): Recipient[] {
  const seen = new Set<string>()
  const out: Recipient[] = []
  for (const kind of ['to', 'cc', 'bcc'] as const) {
    for (const raw of input[kind] ?? []) {
      const address = raw.trim().toLowerCase()
      if (seen.has(address)) continue
      seen.add(address)
      out.push({ address, kind })
      if (out.length > MAX_RECIPIENTS) {
        throw fail(
          'too_many_recipients',
          `An email can have at most ${MAX_RECIPIENTS} recipients across to, cc and bcc`,
          kind,
        )
      }
    }
  }
  return out
}

/**
 * A live send to a suppressed address fails with 422 `recipient_suppressed`, param the address
 * (the first suppressed one in recipient order).
 */
export function suppressionError(
  recipients: Recipient[],
  suppressed: ReadonlySet<string>,
): MailerError | null {
  const hit = recipients.find((r) => suppressed.has(r.address))
  return hit
    ? new MailerError('recipient_suppressed', `${hit.address} is on the suppression list`, {
        param: hit.address,
      })
    : null
}

/** Throws suppressionError's error, if any. */
export function checkSuppression(recipients: Recipient[], suppressed: ReadonlySet<string>): void {
  const e = suppressionError(recipients, suppressed)
  if (e) throw e
}
