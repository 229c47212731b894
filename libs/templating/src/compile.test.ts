import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  checkSyntax,
  checkTemplateSyntax,
  compileTemplate,
  MAX_RENDER_ITERATIONS,
  MAX_TEMPLATE_MUSTACHES,
  RenderTooLarge,
  renderTemplate,
} from './compile.js'
import { errorOf } from './error-of.test-support.js'

describe('renderTemplate', () => {
  it('escapes {{x}} in html only, never {{{x}}}, and leaves subject and text unescaped', () => {
    const out = renderTemplate(
      { subject: 'Hi {{name}}', html: '<p>{{name}} / {{{name}}}</p>', text: 'Hello {{name}}' },
      { name: 'Tom & <Jerry>' },
    )
    expect(out).toEqual({
      subject: 'Hi Tom & <Jerry>',
      html: '<p>Tom &amp; &lt;Jerry&gt; / Tom & <Jerry></p>',
      text: 'Hello Tom & <Jerry>',
    })
  })

  it('supports #if and #each', () => {
    const out = renderTemplate(
      { html: '{{#if vip}}<b>VIP</b>{{/if}}<ul>{{#each items}}<li>{{name}}</li>{{/each}}</ul>' },
      { vip: true, items: [{ name: 'a' }, { name: 'b' }] },
    )
    expect(out.html).toBe('<b>VIP</b><ul><li>a</li><li>b</li></ul>')
  })

  it('derives text from the rendered html when there is no text part', () => {
    const out = renderTemplate(
      { html: '<h1>Hello {{name}}</h1><p>Your code: <b>{{code}}</b></p>' },
      { name: 'A&B', code: 42 },
    )
    expect(out.text).toBe('Hello A&B\n\nYour code: 42')
  })

  it('keeps a subject on one line whatever the data holds', () => {
    const out = renderTemplate({ subject: 'Hi {{name}}' }, { name: 'x\r\nBcc: evil@example.com' })
    expect(out.subject).toBe('Hi x Bcc: evil@example.com')
  })

  it('turns each run of whitespace holding a line break into one space, keeping the others', () => {
    const out = renderTemplate({ subject: 'A{{x}}B{{y}}C' }, { x: ' \t \r\n\n  ', y: '  \t ' })
    expect(out.subject).toBe('A B  \t C')
    // Megabytes of spaces in data: one pass (this used to be retried from every space).
    const spaces = ' '.repeat(4_000_000)
    expect(renderTemplate({ subject: 'Hi {{x}}!' }, { x: `${spaces}\n${spaces}` }).subject).toBe('Hi !')
  })

  it('cuts a rendered subject at 998 characters without splitting an emoji', () => {
    const long = renderTemplate({ subject: '{{s}}' }, { s: 'x'.repeat(1200) }).subject!
    expect(long).toBe('x'.repeat(998))
    // The 998th character is the first half of the emoji: the emoji goes whole, not half of it.
    const cut = renderTemplate({ subject: '{{s}}' }, { s: `${'a'.repeat(997)}😀b` }).subject!
    expect(cut).toBe('a'.repeat(997))
    expect(/\p{Cs}/u.test(cut)).toBe(false)
    expect(renderTemplate({ subject: '{{s}}' }, { s: `${'a'.repeat(996)}😀b` }).subject).toBe(
      `${'a'.repeat(996)}😀`,
    )
  })

  it('drops control characters from a rendered subject, keeping tabs', () => {
    const out = renderTemplate({ subject: 'Hi {{name}}' }, { name: 'a\u0007b\u001b[2J\tc\u007f' })
    expect(out.subject).toBe('Hi ab[2J\tc')
  })

  it('renders missing variables as empty and returns null for absent parts', () => {
    expect(renderTemplate({ subject: 'Hi {{name}}!' }, {})).toEqual({
      subject: 'Hi !',
      html: null,
      text: null,
    })
  })

  it('does not expose prototype properties', () => {
    expect(renderTemplate({ text: '[{{constructor}}][{{__proto__}}]' }, {}).text).toBe('[][]')
  })

  it('compiles once and renders many times', () => {
    const t = compileTemplate({ subject: '#{{n}}' })
    expect([1, 2].map((n) => t.render({ n }).subject)).toEqual(['#1', '#2'])
  })
})

describe('checkSyntax', () => {
  it('refuses a part of more than 2,000 {{…}} expressions before Handlebars reads it', () => {
    expect(MAX_TEMPLATE_MUSTACHES).toBe(2_000)
    expect(() => checkSyntax('{{a}} '.repeat(2_000), 'html')).not.toThrow()
    // 200,000 of them: Handlebars alone took about 20 s over these; refused at once.
    for (const [source, field] of [
      ['{{a}} '.repeat(2_001), 'html'],
      ['{{{b}}}'.repeat(200_000), 'text'],
    ] as const) {
      const e = errorOf(() => checkSyntax(source, field, 'template.'))
      expect([e.status, e.code, e.param]).toEqual([400, 'invalid_template', `template.${field}`])
      expect(e.message).toBe(`${field}: at most 2000 {{…}} expressions`)
    }
  })

  it('accepts valid templates', () => {
    expect(() =>
      checkTemplateSyntax({ subject: 'a {{b}}', html: '{{#each x}}{{this}}{{/each}}', text: null }),
    ).not.toThrow()
    for (const html of [
      '{{#if a}}x{{else}}y{{/if}}',
      '{{#each items as |item i|}}{{item}}{{i}}{{/each}}',
      '{{#with user}}{{name}}{{/with}}{{#unless b}}z{{/unless}}',
      '{{lookup names 1}} {{#each xs}}{{lookup ../map this}}{{/each}}',
    ]) {
      expect(() => checkSyntax(html, 'html')).not.toThrow()
      // And what passes the check renders.
      expect(() =>
        compileTemplate({ html }).render({ a: 1, items: [1], user: {}, names: [], xs: [] }),
      ).not.toThrow()
    }
  })

  it.each([
    ['unclosed block', '{{#if x}}a'],
    ['unclosed mustache', 'Hello {{name'],
    ['unknown helper', '{{shout name}}'],
    ['partial', '{{> footer}}'],
    ['#if without its argument', '{{#if}}x{{/if}}'],
    ['#each with two arguments', '{{#each a b}}x{{/each}}'],
    ['#with without its argument', '{{#with}}x{{/with}}'],
    ['#unless without its argument', '{{#unless}}x{{/unless}}'],
    ['if outside a block', '{{if x}}'],
    ['lookup without its arguments', '{{lookup}}'],
    ['a misused helper inside another block', '{{#each items}}{{#if}}y{{/if}}{{/each}}'],
    ['the log helper', '<p>{{log email first_name}}</p>'],
    ['log as a block', '{{#log email}}x{{/log}}'],
    ['log in a subexpression', '{{#if (log email)}}x{{/if}}'],
  ])('rejects %s with invalid_template and the field as param', (_what, src) => {
    const e = errorOf(() => checkSyntax(src, 'html'))
    expect(e).toMatchObject({ code: 'invalid_template', status: 400, param: 'html' })
    expect(e.message.startsWith('html: ')).toBe(true)
  })

  it('names the first broken part, with a prefix', () => {
    const e = errorOf(() => checkTemplateSyntax({ subject: 'ok', html: 'ok', text: '{{/x}}' }, 'template.'))
    expect(e.param).toBe('template.text')
  })

  it('puts the error on one line, its `---^` pointer as `^`', () => {
    const e = errorOf(() => checkSyntax('Hello\n  {{name', 'html'))
    expect(e.message).toMatch(/^html: Parse error on line 2: Hello {2}\{\{name \^ Expecting 'ID', /)
  })

  // The regexes this replaced retried a run of spaces or dashes from every position in it: 50,000
  // took 2 s, 250,000 about a minute. Such a name is now refused before parsing (one expression
  // holds at most 1,000 characters); the message still quotes a name under that on one line.
  it.each([
    ['spaces', ' '],
    ['dashes', '-'],
  ])(
    'reports an unknown helper named by %s on one line, and refuses 250,000 of them unparsed',
    (_what, c) => {
      const e = errorOf(() => checkSyntax(`{{[${c.repeat(900)}] x}}`, 'html'))
      expect(e.message).toBe(
        `html: ${'You specified knownHelpersOnly, but used the unknown helper '.padEnd(300, c)}`,
      )
      const long = errorOf(() => checkSyntax(`{{[${c.repeat(250_000)}] x}}`, 'html'))
      expect(long.message).toBe('html: a {{…}} expression holds more than 1000 characters')
    },
  )
})

describe('the log helper', () => {
  afterEach(() => vi.restoreAllMocks())

  it('writes nothing to the console when a template saved before it was refused renders it', () => {
    const spies = (['log', 'debug', 'info', 'warn', 'error'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation(() => undefined),
    )
    const out = renderTemplate({ html: '<p>{{log email}}Hi</p>' }, { email: 'ann@example.com' })
    expect(out.html).toBe('<p>Hi</p>')
    for (const spy of spies) expect(spy).not.toHaveBeenCalled()
  })

  it('leaves a variable reached as this.log alone', () => {
    expect(() => checkSyntax('{{this.log}}', 'html')).not.toThrow()
    expect(renderTemplate({ text: '{{this.log}}' }, { log: 'kept' }).text).toBe('kept')
  })
})

describe('bounded rendering', () => {
  const nested =
    '{{#each a}}{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}.{{/each}}{{/each}}{{/each}}{{/each}}'

  it('fails a render whose #each blocks would repeat past the limit, and the next render starts afresh', () => {
    // 60^4 ≈ 13 million iterations from 200 bytes of data (1,000 items would be 10^12: hours).
    const t = compileTemplate({ html: nested })
    const e = errorOf(() => t.render({ a: Array.from({ length: 60 }, (_, i) => i) }))
    expect(e).toMatchObject({ code: 'invalid_template_data', status: 400, param: 'data' })
    expect(e.message).toContain(`more than ${MAX_RENDER_ITERATIONS} times`)
    expect(t.render({ a: [1, 2] }).html).toBe('................')
  })

  it('counts iterations across a whole render, every part and block', () => {
    const each = `{{#each a}}x{{/each}}`
    const a = Array.from({ length: MAX_RENDER_ITERATIONS / 2 }, () => 0)
    expect(() => renderTemplate({ html: each }, { a })).not.toThrow()
    expect(errorOf(() => renderTemplate({ html: each, text: each, subject: each }, { a })).code).toBe(
      'invalid_template_data',
    )
  })

  it('fails a render that blows a value up to hundreds of MB instead of deriving text from it', () => {
    const big = 'y'.repeat(8 * 1024 * 1024)
    const e = errorOf(() =>
      renderTemplate({ html: '<p>{{{b}}}{{{b}}}{{{b}}}{{{b}}}{{{b}}}</p>' }, { b: big }),
    )
    expect(e).toMatchObject({ code: 'invalid_template_data', param: 'data' })
    expect(e.message).toContain('longer than')
  })
})

describe('renders bounded by the size limit (RenderLimits)', () => {
  const kb = `<p>${'x'.repeat(1016)}</p>\n` // 1,024 characters
  const limits = { maxBytes: 10 * 1024 }

  it('stops an #each as soon as the output passes the limit: 400 payload_too_large, param the part', () => {
    // Each iteration reads `tick` once: how many were rendered before the render was refused.
    let ticks = 0
    const data = {
      rows: Array.from({ length: 1000 }, (_, i) => i),
      get tick() {
        ticks++
        return ''
      },
    }
    const t = compileTemplate({ subject: 'Hi', html: `{{#each rows}}{{@root.tick}}${kb}{{/each}}` })
    const e = errorOf(() => t.render(data, limits))
    expect(e).toMatchObject({ code: 'payload_too_large', status: 400, param: 'html' })
    expect(e.message).toContain(`larger than ${limits.maxBytes} bytes`)
    // 1 KB per iteration: refused at the 11th, not after rendering the 1,000.
    expect(ticks).toBe(11)
    // Without limits, the same render runs to the end, as before.
    ticks = 0
    expect(t.render(data).html).toHaveLength(1000 * kb.length)
    expect(ticks).toBe(1000)
  })

  it('carries the subject it rendered before the html or text passed the limit, for the send checks after it', () => {
    const t = compileTemplate({ subject: 'Hi {{name}}\n there', html: '{{{big}}}' })
    const e = errorOf(() => t.render({ name: 'Ada', big: 'x'.repeat(2000) }, { maxBytes: 1000 }))
    expect(e).toBeInstanceOf(RenderTooLarge)
    expect(e).toMatchObject({ code: 'payload_too_large', param: 'html', subject: 'Hi Ada there' })
    // A subject past the limit is itself the answer: no subject to carry.
    const s = errorOf(() => t.render({ name: 'y'.repeat(2000), big: '' }, { maxBytes: 1000 }))
    expect(s).toMatchObject({ code: 'payload_too_large', param: 'subject', subject: null })
    // Not part of the error's JSON: it crosses the bus as { type, code, message, param, status }.
    expect(Object.keys((e as RenderTooLarge).toJSON())).not.toContain('subject')
  })

  it('counts nested iterations once: output of exactly the limit renders', () => {
    const t = compileTemplate({ html: '{{#each a}}{{#each @root.b}}xx{{/each}}y{{/each}}' })
    const a = Array.from({ length: 10 }, () => 0)
    const b = Array.from({ length: 50 }, () => 0)
    // 10 × (50 × 2 + 1) = 1,010 characters.
    expect(t.render({ a, b }, { maxBytes: 1010 }).html).toHaveLength(1010)
    expect(errorOf(() => t.render({ a, b }, { maxBytes: 1009 }))).toMatchObject({
      code: 'payload_too_large',
      param: 'html',
    })
  })

  it('gives the text what the html left, and never derives text from an html over the limit in bytes', () => {
    const both = compileTemplate({ html: '{{h}}', text: '{{t}}' })
    expect(both.render({ h: 'a'.repeat(600), t: 'b'.repeat(400) }, { maxBytes: 1000 }).text).toHaveLength(400)
    expect(
      errorOf(() => both.render({ h: 'a'.repeat(600), t: 'b'.repeat(401) }, { maxBytes: 1000 })),
    ).toMatchObject({ code: 'payload_too_large', param: 'text' })
    // 400 characters, 1,200 bytes of UTF-8: over a 1,000-byte limit before any text is derived.
    const wide = compileTemplate({ html: '<p>{{h}}</p>' })
    expect(errorOf(() => wide.render({ h: '€'.repeat(400) }, { maxBytes: 1000 }))).toMatchObject({
      code: 'payload_too_large',
      param: 'html',
    })
    expect(wide.render({ h: '€'.repeat(300) }, { maxBytes: 1000 }).text).toBe('€'.repeat(300))
  })

  it('refuses a value referenced past the limit without #each, and a render error stays invalid_template_data', () => {
    const e = errorOf(() => renderTemplate({ html: '{{{b}}}{{{b}}}' }, { b: 'y'.repeat(6000) }, { limits }))
    expect(e).toMatchObject({ code: 'payload_too_large', param: 'html' })
    // Loops that write nothing: the iteration limit, not the size, refuses them.
    const nested =
      '{{#each a}}{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}{{/each}}{{/each}}{{/each}}{{/each}}'
    const loops = errorOf(() =>
      renderTemplate({ html: nested }, { a: Array.from({ length: 60 }, (_, i) => i) }, { limits }),
    )
    expect(loops).toMatchObject({ code: 'invalid_template_data', param: 'data' })
  })
})
