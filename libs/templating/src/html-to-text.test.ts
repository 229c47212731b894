import { describe, expect, it } from 'vitest'
import { htmlToText } from './html-to-text.js'

describe('htmlToText', () => {
  it('drops invisible parts and keeps paragraphs apart', () => {
    const html = `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>
      <body><!-- hidden --><script>alert(1)</script><h1>Welcome</h1>
      <p>First   line<br>second line</p><div>Third</div></body></html>`
    expect(htmlToText(html)).toBe('Welcome\n\nFirst line\nsecond line\n\nThird')
  })

  it('keeps link targets and image alt text', () => {
    expect(
      htmlToText(
        '<p><a href="https://x.io/a?b=1&amp;c=2">Open</a> or <a href="https://x.io">https://x.io</a></p>',
      ),
    ).toBe('Open (https://x.io/a?b=1&c=2) or https://x.io')
    expect(htmlToText('<a href="mailto:a@b.co">a@b.co</a> <img src="x.png" alt="Logo">')).toBe('a@b.co Logo')
  })

  it('turns list items into dashes and decodes entities', () => {
    expect(
      htmlToText('<ul><li>one</li><li>two &amp; three</li></ul><p>&copy; 2026&nbsp;Co &#8212; &#x263A;</p>'),
    ).toBe('- one\n- two & three\n\n© 2026 Co — ☺')
  })

  it('decodes a numeric reference to a surrogate, NUL or past Unicode as U+FFFD, as HTML does', () => {
    expect(htmlToText('<p>a&#xD83D;b &#55357; &#xdc00;</p>')).toBe('a\ufffdb \ufffd \ufffd')
    // Two halves given as two references are two replacements, never a pair or a lone half.
    expect(htmlToText('&#xD83D;&#xDE00;')).toBe('\ufffd\ufffd')
    expect(htmlToText('&#0; &#x110000; &#99999999999999999999999;')).toBe('\ufffd \ufffd \ufffd')
    expect(htmlToText('&#x1F600; &#128512; &#xFFFD;')).toBe('😀 😀 \ufffd')
    expect(/\p{Cs}/u.test(htmlToText('<a href="https://x.io/&#xD83D;">&#xD800;</a>'))).toBe(false)
  })

  it('returns plain text unchanged', () => {
    expect(htmlToText('just text')).toBe('just text')
  })

  it('decodes each entity once, links included', () => {
    expect(htmlToText('<a href="https://x.io/?q=&amp;lt;">L</a> &amp;lt;')).toBe(
      'L (https://x.io/?q=&lt;) &lt;',
    )
  })

  it('reads every <br> as a line break and keeps image alt text inside links', () => {
    expect(htmlToText('x<br class="y">y<BR/>z')).toBe('x\ny\nz')
    expect(htmlToText('<a href="https://x.io"><img src="a" alt="Logo"> Shop</a>')).toBe(
      'Logo Shop (https://x.io)',
    )
    expect(htmlToText('<a href="https://x.io"><!--[if mso]>hidden<![endif]-->Go</a>')).toBe(
      'Go (https://x.io)',
    )
  })

  it('hides what an unclosed comment hides, and keeps what an unclosed tag leaves as text', () => {
    expect(htmlToText('<p>x</p><!-- never closed <p>y</p>')).toBe('x')
    expect(htmlToText('a < b and c > d <p')).toBe('a < b and c > d <p')
    expect(htmlToText('<style>unclosed <p>text</p>')).toBe('unclosed\n\ntext')
    expect(htmlToText('<a href="https://x.io">unclosed link <b>bold</b>')).toBe('unclosed link bold')
  })

  it('finds closing tags after an `İ` (it lower-cases to two code units)', () => {
    expect(htmlToText('<p>İzmir</p><style>p{}</style>Go <a href="https://x.io">here</a>')).toBe(
      'İzmir\n\nGo here (https://x.io)',
    )
  })

  it('reads several MB of unclosed tags in one pass (each used to rescan to the end: hours)', () => {
    expect(htmlToText('<img alt="'.repeat(400_000))).toBe('<img alt="'.repeat(400_000))
    expect(htmlToText(`<b>x</b>${'<a x'.repeat(1_000_000)}`)).toBe(`x${'<a x'.repeat(1_000_000)}`)
    expect(htmlToText(`${'<a>'.repeat(1_000_000)}end`)).toBe('end')
    expect(htmlToText(`${'<style>'.repeat(500_000)}</style>shown`)).toBe('shown')
  })
})
