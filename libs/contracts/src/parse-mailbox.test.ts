import { describe, expect, it } from 'vitest'
import { parseMailbox, SendEmailInput } from './emails.js'

describe('parseMailbox', () => {
  it('reads a bare address, a named one and a quoted name with escapes', () => {
    expect(parseMailbox('a@b.co')).toEqual({ name: null, address: 'a@b.co' })
    expect(parseMailbox('  Acme Billing   <billing@acme.test> ')).toEqual({
      name: 'Acme Billing',
      address: 'billing@acme.test',
    })
    expect(parseMailbox('"Acme \\"Rocket\\" Co" <a@b.co>')).toEqual({
      name: 'Acme "Rocket" Co',
      address: 'a@b.co',
    })
    expect(parseMailbox('"  Spaced  "<a@b.co>')).toEqual({ name: 'Spaced', address: 'a@b.co' })
    expect(parseMailbox('<a@b.co>')).toEqual({ name: null, address: 'a@b.co' })
    expect(parseMailbox('"" <a@b.co>')).toEqual({ name: null, address: 'a@b.co' })
  })

  it('refuses what is neither', () => {
    for (const value of [
      'Acme',
      'Acme <a@b.co',
      'Ac"me <a@b.co>',
      'A > B <a@b.co>',
      '"Acme <a@b.co>',
      '"a\\',
      // A `\` does not take a line terminator.
      '"a\\\u2028" <a@b.co>',
      'Acme <a@b.co> x',
      'Acme <a b@c.d>',
      'Acme\n<a@b.co>',
    ])
      expect(parseMailbox(value)).toBeNull()
  })

  // Size chosen so the regex this replaced (its lazy name retried `\s*<` from every space) runs far
  // past the test timeout: 50 KB took 3 s, 200 KB about a minute. Read in one pass: milliseconds.
  it('reads a value with 200 KB of spaces in one pass, as the schema does before its limit refuses it', () => {
    const spaces = ' '.repeat(200_000)
    expect(parseMailbox(`a${spaces}b`)).toBeNull()
    expect(parseMailbox(`a${spaces}<x`)).toBeNull()
    expect(parseMailbox(`Name${spaces}<a@b.co>`)).toEqual({ name: 'Name', address: 'a@b.co' })
    expect(SendEmailInput.safeParse({ from: `a${spaces}b`, to: 'x@y.co' }).success).toBe(false)
  })

  it('reads a quoted name of 10 MB (the regex took a stack frame per character: a RangeError)', () => {
    const long = 'a'.repeat(10_000_000)
    expect(parseMailbox(`"${long}`)).toBeNull()
    expect(parseMailbox(`"${long}" <a@b.co>`)?.name).toBe(long)
  })
})
