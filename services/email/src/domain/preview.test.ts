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

  it('hides script, style and head up to their first closing tag, any case, and leaves unclosed ones', () => {
    expect(textPreview(null, 'x<SCRIPT>hide()</script>y<style>p{}</STYLE>z')).toBe('x y z')
    // The first opening wins; an element inside it goes with it.
    expect(textPreview(null, '<head><script>a</head>b</script>c')).toBe('b c')
    // Openings never closed are text (with no `>` after them, no tag either); a later closed one still goes.
    expect(textPreview(null, '<style<style<styleA<script>x</script>B')).toBe('<style<style<styleA B')
    expect(textPreview(null, 'a < b <p>c</p> d <e')).toBe('a c d <e')
  })

  // Sizes chosen so the regexes this replaced (each rescanning to the end from every `<` or
  // opening with nothing closing it) run far past the test timeout: `<` × 300,000 took about a
  // minute, the openings about two. Read in one pass, each takes milliseconds.
  it('reads hundreds of KB of unclosed tags in one pass', () => {
    expect(textPreview(null, '<'.repeat(300_000))).toBe('<'.repeat(200))
    expect(textPreview(null, `${'<script<style<head'.repeat(60_000)}<p>shown</p>`)).toBe('shown')
  })
})
