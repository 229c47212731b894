import { describe, expect, it } from 'vitest'
import { TemplateVariable } from './templates.js'

describe('TemplateVariable', () => {
  it('takes an identifier or a dotted path of at most 100 characters', () => {
    expect(TemplateVariable.safeParse({ name: 'user.first_name' }).success).toBe(true)
    expect(TemplateVariable.safeParse({ name: 'a..b' }).success).toBe(false)
    expect(TemplateVariable.safeParse({ name: 'x'.repeat(101) }).success).toBe(false)
  })

  it('refuses a name of millions of characters as too long, without running its pattern', () => {
    // The pattern takes a backtracking frame per segment: on this it threw a RangeError (a 500).
    const r = TemplateVariable.safeParse({ name: `${'a.'.repeat(4_000_000)}!` })
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.code)).toEqual(['too_big'])
  })
})
