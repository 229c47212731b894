import { z } from 'zod'
import { pageQuery } from './pagination.js'

/**
 * Why an address is suppressed, weakest first. An address is suppressed once for the whole
 * deployment; a later, stronger reason replaces a weaker one and never the other way round.
 */
export const SUPPRESSION_REASONS = ['manual', 'hard_bounce', 'complaint'] as const
export const SuppressionReason = z.enum(SUPPRESSION_REASONS)
export type SuppressionReason = z.infer<typeof SuppressionReason>

export const suppressionRank = (reason: string): number =>
  SUPPRESSION_REASONS.indexOf(reason as SuppressionReason)

/** Suppressed addresses are stored and compared lower-cased. */
export const normalizeAddress = (address: string): string => address.trim().toLowerCase()

// Deliberately lenient (one @, no spaces or brackets, a dotted domain): the list must be able
// to hold any address the send path accepted.
const ADDRESS_RE = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:".]+$/

// Trimmed and lower-cased as normalizeAddress does, before the length check: the limit is on the
// address as stored (spaces around one of valid length made it 400 before).
export const SuppressionAddress = z
  .string()
  .trim()
  .toLowerCase()
  .max(320, 'must be at most 320 characters')
  .refine((a) => ADDRESS_RE.test(a), 'must be an email address')

export const AddSuppressionBody = z.strictObject({
  address: SuppressionAddress,
  reason: SuppressionReason.default('manual'),
})
export type AddSuppressionBody = z.infer<typeof AddSuppressionBody>

// `q` is trimmed and lower-cased like the addresses it searches: a pasted address with a space
// or line break around it found nothing. A space left inside is a `+` typed into the URL
// unencoded (form decoding turns it into a space: `?q=ann+news` arrived as `ann news`, which no
// address holds), as the email list reads its `to` and `from`.
export const SuppressionsQuery = pageQuery(200, 50).extend({
  q: z
    .string()
    .trim()
    .toLowerCase()
    .max(320)
    .transform((q) => q.replaceAll(' ', '+'))
    .optional(),
})

export const SuppressionRecord = z.object({
  address: z.string(),
  reason: SuppressionReason,
  sourceEmailId: z.string().nullable(),
  createdAt: z.string(),
})
export type SuppressionRecord = z.infer<typeof SuppressionRecord>

export const RemovedSuppression = z.object({ address: z.string(), deleted: z.boolean() })
