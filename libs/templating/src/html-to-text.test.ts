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

  it('returns plain text unchanged', () => {
    expect(htmlToText('just text')).toBe('just text')
  })
})
