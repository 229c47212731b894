import Handlebars from 'handlebars'
import { describe, expect, it } from 'vitest'
import { checkSyntax, compileTemplate, MAX_RENDER_STEPS, renderTemplate } from './compile.js'
import { errorOf } from './error-of.test-support.js'
import { MAX_EXPRESSION_CHARS, MAX_SUBEXPRESSION_DEPTH, MAX_TEMPLATE_SEGMENTS } from './expression-scan.js'

// One ordinary-sized request must not hold the service: every expression's output is charged
// against the part's output budget as it is produced, every evaluation against the render's steps,
// and what one {{…}} may hold is bounded before anything is parsed.

/** A value that counts how often a render turns it into text. */
const counted = (chars: number) => {
  const v = {
    calls: 0,
    toString() {
      v.calls++
      return '&'.repeat(chars)
    },
  }
  return v
}

describe('expression outputs charged as they are produced', () => {
  const limits = { maxBytes: 1_000_000 }

  it('stops escaped {{x}} copies at the limit: payload_too_large with the part, not at the end', () => {
    const x = counted(20_000) // 100,000 characters once escaped
    const e = errorOf(() => renderTemplate({ html: '{{x}}'.repeat(2000) }, { x }, { limits }))
    expect(e).toMatchObject({ code: 'payload_too_large', status: 400, param: 'html' })
    // The 11th copy passes 1,000,000 characters: the other 1,989 are never made.
    expect(x.calls).toBe(11)
  })

  it('stops stringified {{x}} in text and {{{x}}} in html the same way', () => {
    const x = counted(100_000)
    expect(errorOf(() => renderTemplate({ text: '{{x}}'.repeat(2000) }, { x }, { limits }))).toMatchObject({
      code: 'payload_too_large',
      param: 'text',
    })
    expect(x.calls).toBe(11)
    const y = counted(100_000)
    expect(errorOf(() => renderTemplate({ html: '{{{y}}}'.repeat(2000) }, { y }))).toMatchObject({
      code: 'invalid_template_data',
      param: 'data',
    })
    // Without limits, the 32 Mi-character bound: 336 copies, not 2,000.
    expect(y.calls).toBe(336)
  })

  it('never refuses a part that fits: output of exactly the limit renders', () => {
    const t = compileTemplate({
      subject: '{{s}}',
      html: '<p>{{a}}{{{b}}}{{#if c}}{{a}}{{/if}}</p>',
      text: '{{a}}',
    })
    // html: 7 + 10 (escaped `&&`) + 3 + 10 = 30 characters; text: 2; 32 in all.
    const data = { s: 'Hi', a: '&&', b: '<i>', c: true }
    expect(t.render(data, { maxBytes: 32 })).toEqual({
      subject: 'Hi',
      html: '<p>&amp;&amp;<i>&amp;&amp;</p>',
      text: '&&',
    })
    expect(errorOf(() => t.render(data, { maxBytes: 31 }))).toMatchObject({
      code: 'payload_too_large',
      param: 'text',
    })
  })
})

describe('a work budget per render (MAX_RENDER_STEPS)', () => {
  it('refuses an #each body of many expressions over many items: invalid_template_data', () => {
    let reads = 0
    const data = {
      items: Array.from({ length: 20_000 }, () => 1),
      get e() {
        reads++
        return ''
      },
    }
    const e = errorOf(() =>
      renderTemplate({ html: `{{#each items}}${'{{../e}}'.repeat(1997)}{{/each}}` }, data),
    )
    expect(e).toMatchObject({ code: 'invalid_template_data', status: 400, param: 'data' })
    expect(e.message).toContain(`more than ${MAX_RENDER_STEPS} expressions`)
    expect(reads).toBeLessThanOrEqual(MAX_RENDER_STEPS)
  })

  it('counts helper calls too', () => {
    const html = `{{#each items}}${'{{#if this}}{{/if}}'.repeat(100)}{{/each}}`
    const e = errorOf(() => renderTemplate({ html }, { items: Array.from({ length: 20_000 }, () => 1) }))
    expect(e).toMatchObject({ code: 'invalid_template_data', param: 'data' })
  })

  it('renders a 10,000-row table of 10 columns, and 1 MB of static html with a few variables', () => {
    const cols = Array.from({ length: 10 }, (_, i) => `<td>{{#if c${i}}}{{c${i}}}{{/if}}</td>`).join('')
    const rows = Array.from({ length: 10_000 }, (_, r) =>
      Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`c${i}`, `r${r}c${i}`])),
    )
    const table = renderTemplate({ html: `<table>{{#each rows}}<tr>${cols}</tr>{{/each}}</table>` }, { rows })
    expect(table.html).toContain('<tr><td>r9999c0</td>')
    const page = `<p>${'Lorem ipsum dolor sit amet. '.repeat(35_000)}</p>`
    const big = renderTemplate(
      {
        subject: 'Hi {{name}}',
        html: `<h1>{{name}}</h1>${page}<p>{{plan}} {{#each items}}{{this}}{{/each}}</p>`,
      },
      { name: 'Ann', plan: 'Pro', items: [1, 2] },
      { limits: { maxBytes: 10 * 1024 * 1024 } },
    )
    expect(big.html).toBe(`<h1>Ann</h1>${page}<p>Pro 12</p>`)
  })
})

describe('what one expression may hold, checked before parsing', () => {
  const refused = (source: string) => errorOf(() => checkSyntax(source, 'html', 'content.'))

  it('refuses a {{…}} over MAX_EXPRESSION_CHARS characters', () => {
    const e = refused(`{{a${'.a'.repeat(100_000)}}}`)
    expect(e).toMatchObject({ code: 'invalid_template', status: 400, param: 'content.html' })
    expect(e.message).toContain(`${MAX_EXPRESSION_CHARS} characters`)
    const hash = Array.from({ length: 45_000 }, (_, i) => `k${i}=(lookup a "b")`).join(' ')
    expect(refused(`{{#each items}}{{lookup a "b" ${hash}}}{{/each}}`).code).toBe('invalid_template')
    // A string or [segment] holding `}}` does not end the expression early.
    expect(refused(`{{lookup a "}}"${' k=(lookup a "b")'.repeat(100)}}}`).code).toBe('invalid_template')
    expect(refused(`{{[}}]${'.a'.repeat(1000)}}}`).code).toBe('invalid_template')
  })

  it('refuses subexpressions nested deeper than MAX_SUBEXPRESSION_DEPTH', () => {
    let nest = 'a'
    for (let i = 0; i < 3000; i++) nest = `(lookup ${nest} "b")`
    expect(refused(`{{lookup ${nest} "b"}}`).message).toContain(`${MAX_SUBEXPRESSION_DEPTH} deep`)
    nest = 'a'
    for (let i = 0; i < MAX_SUBEXPRESSION_DEPTH; i++) nest = `(lookup ${nest} "b")`
    expect(() => checkSyntax(`{{lookup ${nest} "b"}}`, 'html')).not.toThrow()
  })

  it('refuses more than MAX_TEMPLATE_SEGMENTS segments in all the expressions of a part', () => {
    const one = `{{lookup a "b"${' k=(lookup a "b")'.repeat(20)}}}` // 40 segments, 357 characters
    expect(refused(one.repeat(126)).message).toContain(`${MAX_TEMPLATE_SEGMENTS} path segments`)
    expect(() => checkSyntax(one.repeat(125), 'html')).not.toThrow()
  })

  it('lets long comments, escaped mustaches and ordinary templates through', () => {
    const ok = [
      `{{!-- ${'a.b/c=(d) '.repeat(2000)} --}}{{a}}`,
      `{{! ${'x.'.repeat(2000)} }}{{b}}`,
      `\\{{${'literal. '.repeat(500)}}}`,
      '<p>{{#each order.items}}{{this.name}}: {{lookup ../prices this.sku}}{{/each}}</p>'.repeat(100),
    ]
    for (const source of ok) expect(() => checkSyntax(source, 'html'), source.slice(0, 40)).not.toThrow()
  })
})

it('leaves the global Handlebars as it was', () => {
  expect(Handlebars.compile('{{x}}{{{x}}}')({ x: '&' })).toBe('&amp;&')
})
