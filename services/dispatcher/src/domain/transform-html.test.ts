import { Links, MAX_TRACKED_LINKS, trackingGrowth } from '@mailer/links'
import { describe, expect, it } from 'vitest'
import type { ClaimedEmail } from './claimed-email.js'
import { transformHtml } from './transform-html.js'

const links = new Links({ publicUrl: 'https://mail.example.com', secret: 'x'.repeat(32) })
const email = (trackOpens: boolean, trackClicks: boolean) =>
  ({ id: 'email_01KTRANSFORMHTMLTEST000000', trackOpens, trackClicks }) as ClaimedEmail

const clickTarget = (href: string) => {
  const token = href.slice('https://mail.example.com/t/c/'.length)
  return links.verify(token, 'click')
}

describe('transformHtml', () => {
  const html =
    '<html><body><p><a class="b" href="https://shop.example/item?a=1&amp;b=2">Buy</a> ' +
    '<a href=\'http://x.example\'>x</a> <a href=mailto:a@b.co>mail</a> <a href="#top">top</a> ' +
    '<a href="https://mail.example.com/u/abc">unsubscribe</a></p></body></html>'

  it('leaves the html alone without tracking or without links', () => {
    expect(transformHtml(email(false, false), html, links)).toBe(html)
    expect(transformHtml(email(true, true), html, null)).toBe(html)
  })

  it('wraps http(s) links in signed click links for the exact original URL', () => {
    const out = transformHtml(email(false, true), html, links)
    const hrefs = [...out.matchAll(/href=("([^"]*)"|'([^']*)'|([^\s>]+))/g)].map((m) => m[2] ?? m[3] ?? m[4])
    expect(hrefs).toHaveLength(5)
    expect(clickTarget(hrefs[0]!)).toEqual({
      kind: 'click',
      emailId: 'email_01KTRANSFORMHTMLTEST000000',
      url: 'https://shop.example/item?a=1&b=2',
    })
    expect(clickTarget(hrefs[1]!)?.url).toBe('http://x.example')
    expect(hrefs.slice(2)).toEqual(['mailto:a@b.co', '#top', 'https://mail.example.com/u/abc'])
    expect(out).toContain('<a class="b" href="https://mail.example.com/t/c/')
    expect(out).not.toContain('/t/o/')
  })

  it('adds the open pixel before </body>, or at the end', () => {
    const out = transformHtml(email(true, false), html, links)
    expect(out).toMatch(
      /<img src="https:\/\/mail\.example\.com\/t\/o\/[\w-]+\.[\w-]+" width="1" height="1"[^>]*\/><\/body><\/html>$/,
    )
    expect(out).toContain('href="https://shop.example/item?a=1&amp;b=2"')
    const bare = transformHtml(email(true, false), '<p>hi</p>', links)
    expect(bare.startsWith('<p>hi</p><img src="https://mail.example.com/t/o/')).toBe(true)
  })

  it('reads the tag attribute by attribute: href=… or > inside another value is text, not the link', () => {
    const tricky =
      '<a title="see href=https://decoy.example/ and a > b" data-x=\'href="http://decoy.example"\' HREF="https://real.example/p">x</a>'
    const out = transformHtml(email(false, true), tricky, links)
    expect(
      out.startsWith(
        '<a title="see href=https://decoy.example/ and a > b" data-x=\'href="http://decoy.example"\' href="https://mail.example.com/t/c/',
      ),
    ).toBe(true)
    const href = /href="(https:\/\/mail\.example\.com\/t\/c\/[^"]+)"/.exec(out)![1]!
    expect(clickTarget(href)?.url).toBe('https://real.example/p')
    expect(out.endsWith('">x</a>')).toBe(true)
  })

  it("reads a bare href up to whitespace or `>`, as HTML does: `=` in it is the URL's, not an end", () => {
    const html =
      '<p><a href=https://shop.example/p?a=1&amp;b=2>Buy</a> <a class=b href=https://x.example/?q=a=b data-x=1>X</a></p>'
    const out = transformHtml(email(false, true), html, links)
    const m = /^<p><a href="([^"]+)">Buy<\/a> <a class=b href="([^"]+)" data-x=1>X<\/a><\/p>$/.exec(out)
    expect(m).not.toBeNull()
    expect(clickTarget(m![1]!)?.url).toBe('https://shop.example/p?a=1&b=2')
    expect(clickTarget(m![2]!)?.url).toBe('https://x.example/?q=a=b')
  })

  it('takes a tag that never ends for text and reads the next one', () => {
    // The first `<a` runs into an unclosed quote; the second is a link.
    const out = transformHtml(email(false, true), '<a title="x <a href="https://y.example/">y</a>', links)
    const m = /^<a title="x <a href="([^"]+)">y<\/a>$/.exec(out)
    expect(clickTarget(m![1]!)?.url).toBe('https://y.example/')
  })

  // Size chosen so the regex this replaced (a rescan to the end from every `<a` with no `>` after
  // it) runs far past the test timeout: 100,000 `<a ` took about 50 s. Read in one pass: milliseconds.
  it('reads hundreds of KB of unclosed <a in one pass', () => {
    const tail = `${'<a '.repeat(100_000)}${'<a "<a \'<a x='.repeat(20_000)}`
    const out = transformHtml(email(false, true), `<p><a href="https://x.example/p">x</a></p>${tail}`, links)
    expect(out.endsWith(tail)).toBe(true)
    const m = /^<p><a href="([^"]+)">x<\/a><\/p>$/.exec(out.slice(0, out.length - tail.length))
    expect(clickTarget(m![1]!)?.url).toBe('https://x.example/p')
  })

  it('adds the pixel before </body> whatever precedes it (`İ` lower-cases to two code units)', () => {
    const out = transformHtml(email(true, false), '<body><p>İstanbul, İzmir</p></BODY>', links)
    expect(out).toMatch(
      /^<body><p>İstanbul, İzmir<\/p><img src="https:\/\/mail\.example\.com\/t\/o\/[^"]+"[^>]*\/><\/BODY>$/,
    )
  })
})

describe('bounded click tracking', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => `<a href=https://s.io/${i}>x</a>`).join('')

  it(`wraps the first ${MAX_TRACKED_LINKS} links of an email and leaves the rest as they are`, () => {
    // Every wrapped link is an HMAC and ~80 bytes more: 9 MB of such links became 48 MB.
    const html = many(MAX_TRACKED_LINKS + 50)
    const out = transformHtml(email(false, true), html, links)
    const hrefs = [...out.matchAll(/href="?([^">]+)/g)].map((m) => m[1]!)
    expect(hrefs).toHaveLength(MAX_TRACKED_LINKS + 50)
    const wrapped = hrefs.slice(0, MAX_TRACKED_LINKS)
    expect(wrapped.every((h) => clickTarget(h) !== null)).toBe(true)
    expect(clickTarget(wrapped.at(-1)!)?.url).toBe(`https://s.io/${MAX_TRACKED_LINKS - 1}`)
    expect(hrefs.slice(MAX_TRACKED_LINKS)).toEqual(
      Array.from({ length: 50 }, (_, i) => `https://s.io/${MAX_TRACKED_LINKS + i}`),
    )
    expect(out.endsWith(html.slice(html.indexOf(`<a href=https://s.io/${MAX_TRACKED_LINKS}>`)))).toBe(true)
  })

  it('grows the html by exactly what the email service measured when it accepted the email', () => {
    const htmls = [
      '<html><body><p><a class="b" href="https://shop.example/item?a=1&amp;b=2">Buy</a> <a href=mailto:a@b.co>m</a></p></body></html>',
      `<a title="see href=https://decoy.example/" HREF='https://real.example/p'>x</a><a href>no value</a>`,
      '<p>Grüße: <a href="https://x.example/straße?q=&#xFC;&quot;">ü</a> <a href="https://mail.example.com/u/abc">u</a></p>',
      `<a href="https://long.example/${'p'.repeat(2100)}">too long to track</a>`,
      many(MAX_TRACKED_LINKS + 3),
      '',
    ]
    for (const html of htmls) {
      for (const [opens, clicks] of [
        [true, false],
        [false, true],
        [true, true],
      ] as const) {
        const e = email(opens, clicks)
        const grown = Buffer.byteLength(transformHtml(e, html, links)) - Buffer.byteLength(html)
        expect(
          trackingGrowth(html, { publicUrl: 'https://mail.example.com/', emailId: e.id, clicks, opens }),
          `${html.slice(0, 40)} opens=${opens} clicks=${clicks}`,
        ).toBe(grown)
      }
    }
  })
})
