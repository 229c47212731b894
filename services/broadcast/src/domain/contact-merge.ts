import type { ContactInput } from '@mailer/contracts'

/**
 * One entry per email, in first-seen order: a later entry for the same email overrides the
 * fields it gives (an import can name a contact twice; a single upsert statement cannot touch
 * one row twice). A null, like a field left out, means "keep", so it overrides nothing.
 */
export function mergeByEmail(inputs: readonly ContactInput[]): ContactInput[] {
  const byEmail = new Map<string, ContactInput>()
  for (const input of inputs) {
    const prev = byEmail.get(input.email)
    byEmail.set(input.email, prev ? { ...prev, ...definedOnly(input) } : { ...input })
  }
  return [...byEmail.values()]
}

function definedOnly(input: ContactInput): Partial<ContactInput> {
  return Object.fromEntries(
    Object.entries(input).filter(([, v]) => v !== undefined && v !== null),
  ) as Partial<ContactInput>
}
