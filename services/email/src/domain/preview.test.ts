import { describe, expect, it } from 'vitest'
import { textPreview } from './preview.js'

const LONE = /\p{Cs}/u

describe('textPreview', () => {
  it('keeps the first 200 characters of the text, or of the html without its tags', () => {
    expect(textPreview('x'.repeat(300), null)).toBe('x'.repeat(200))
    expect(textPreview(null, '<p>Hello <b>there</b></p><script>x()</script>')).toBe('Hello there')
  })

  it('never ends in half an emoji: one across characters 199-200 is left out whole', () => {
    const text = `${'a'.repeat(199)}😀 and more`
    const preview = textPreview(text, null)
    expect(preview).toBe('a'.repeat(199))
    expect(LONE.test(preview)).toBe(false)
    expect(textPreview(null, `<p>${'a'.repeat(199)}😀</p>`)).toBe('a'.repeat(199))
    // An emoji that fits whole is kept.
    expect(textPreview(`${'a'.repeat(198)}😀b`, null)).toBe(`${'a'.repeat(198)}😀`)
  })
})
