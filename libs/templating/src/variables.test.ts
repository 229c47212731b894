import { describe, expect, it } from 'vitest'
import { checkRequired, exampleData, templateData } from './variables.js'

describe('checkRequired', () => {
  const vars = [
    { name: 'name', required: true },
    { name: 'user.plan', required: true },
    { name: 'nickname', required: false },
  ]
  it('passes when every required variable has a value', () => {
    expect(() => checkRequired(vars, { name: '', user: { plan: 'pro' } })).not.toThrow()
  })
  it('names the first missing one as data.<name>', () => {
    expect(() => checkRequired(vars, { name: 'a', user: {} })).toThrow(
      expect.objectContaining({ code: 'invalid_template_data', param: 'data.user.plan' }),
    )
    expect(() => checkRequired(vars, { name: null })).toThrow(expect.objectContaining({ param: 'data.name' }))
  })
  it('does not follow inherited properties', () => {
    expect(() => checkRequired([{ name: 'toString', required: true }], {})).toThrow(
      expect.objectContaining({ param: 'data.toString' }),
    )
  })
})

describe('templateData', () => {
  it('accepts objects and absence, rejects anything else', () => {
    expect(templateData(undefined)).toEqual({})
    expect(templateData({ a: 1 })).toEqual({ a: 1 })
    for (const bad of [null, [], 'x', 3]) {
      expect(() => templateData(bad)).toThrow(
        expect.objectContaining({ code: 'invalid_template_data', param: 'data' }),
      )
    }
  })
})

describe('exampleData', () => {
  it('nests dotted names and skips variables without examples', () => {
    expect(
      exampleData([
        { name: 'a', required: true, example: 'x' },
        { name: 'u.name', required: false, example: 'Ann' },
        { name: 'b', required: false },
      ]),
    ).toEqual({ a: 'x', u: { name: 'Ann' } })
  })
})

describe('exampleData with names through __proto__', () => {
  it('keeps them as own data and never writes to a prototype', () => {
    const out = exampleData([
      { name: '__proto__.polluted', required: false, example: 'yes' },
      { name: 'constructor.prototype.also', required: false, example: 'yes' },
    ])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(({} as Record<string, unknown>).also).toBeUndefined()
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(Object.hasOwn(out, '__proto__')).toBe(true)
    expect(JSON.parse(JSON.stringify(out))).toEqual(
      JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"also":"yes"}}}'),
    )
  })
})
