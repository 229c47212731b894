import { describe, expect, it } from 'vitest'
import { isQuotable, noSuch } from './not-found.js'
import { SLUG_RE } from './projects.js'
import { TEMPLATE_NAME_RE } from './templates.js'

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'

describe('noSuch', () => {
  it('quotes a value of the form it names', () => {
    expect(noSuch('email', 'id', `email_${ULID}`, 'email')).toBe(`No email with id 'email_${ULID}'`)
    expect(noSuch('project', 'slug', 'acme-prd', SLUG_RE)).toBe("No project with slug 'acme-prd'")
    expect(noSuch('template', 'name', 'welcome_2', TEMPLATE_NAME_RE)).toBe(
      "No template with name 'welcome_2'",
    )
  })

  it('does not quote another form, a long value, a secret prefix or nothing', () => {
    expect(noSuch('email', 'id', `ct_${ULID}`, 'email')).toBe('No email with that id')
    expect(noSuch('project', 'slug', 'Acme', SLUG_RE)).toBe('No project with that slug')
    expect(isQuotable('a'.repeat(32), SLUG_RE)).toBe(true)
    expect(isQuotable('a'.repeat(33), SLUG_RE)).toBe(false)
    expect(isQuotable('fs_live_abc', TEMPLATE_NAME_RE)).toBe(false)
    expect(isQuotable('whsec_abc', TEMPLATE_NAME_RE)).toBe(false)
    expect(noSuch('webhook', 'id', undefined, 'webhook')).toBe('No webhook with that id')
  })
})
