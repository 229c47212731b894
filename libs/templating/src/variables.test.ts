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
