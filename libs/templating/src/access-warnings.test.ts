import { afterEach, describe, expect, it, vi } from 'vitest'
import { setTemplateLogger } from './access-warnings.js'
import { compileTemplate } from './compile.js'

afterEach(() => {
  setTemplateLogger(null)
  vi.restoreAllMocks()
})

/** Everything written to the console or the process's stdout and stderr while `fn` runs. */
function writesDuring(fn: () => void): string[] {
  const written: string[] = []
  const keep = (...args: unknown[]) => {
    written.push(args.map(String).join(' '))
    return true
  }
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation(keep)
  }
  vi.spyOn(process.stdout, 'write').mockImplementation(keep)
  vi.spyOn(process.stderr, 'write').mockImplementation(keep)
  try {
    fn()
  } finally {
    vi.restoreAllMocks()
  }
  return written
}

describe('a template reading an inherited property', () => {
  it('renders it as empty, writes no text to the console, and warns once per template in JSON', () => {
    const lines: string[] = []
    setTemplateLogger({
      warn: (fields, msg) => lines.push(JSON.stringify({ level: 'warn', ...fields, msg })),
    })
    const welcome = compileTemplate({ html: '<p>{{toString}}|{{valueOf}}|{{name}}</p>' }, { name: 'welcome' })
    const other = compileTemplate({ subject: 'x{{toString}}' }, { name: 'other' })

    let rendered: (string | null)[] = []
    const written = writesDuring(() => {
      rendered = [
        welcome.render({ name: 'Ann' }).html,
        welcome.render({ name: 'Bob', secret: 's3cret' }).html,
        other.render({}).subject,
      ]
    })

    expect(rendered).toEqual(['<p>||Ann</p>', '<p>||Bob</p>', 'x'])
    expect(written).toEqual([])
    const warns = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(warns.map((w) => [w.level, w.template, w.property])).toEqual([
      ['warn', 'welcome', 'toString'],
      ['warn', 'welcome', 'valueOf'],
      ['warn', 'other', 'toString'],
    ])
    expect(lines.join('\n')).not.toMatch(/Ann|Bob|s3cret/)
  })

  it('writes nothing at all while no service has given a logger', () => {
    const t = compileTemplate({ text: '{{isPrototypeOf}}' }, { name: 'plain' })
    const written = writesDuring(() => {
      expect(t.render({}).text).toBe('')
    })
    expect(written).toEqual([])
  })
})
