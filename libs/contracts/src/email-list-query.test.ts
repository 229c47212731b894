import { describe, expect, it } from 'vitest'
import { ListEmailsQuery, tagSplits } from './emails.js'

describe('the email list tag filter', () => {
  it('reads tag=<key>:<value> at each colon, so a key holding one can be found', () => {
    expect(tagSplits('kind:welcome')).toEqual([['kind', 'welcome']])
    expect(tagSplits('kind:')).toEqual([['kind', '']])
    expect(tagSplits('utm:source:news')).toEqual([
      ['utm', 'source:news'],
      ['utm:source', 'news'],
    ])
    expect(tagSplits('url:https://x.test')).toEqual([
      ['url', 'https://x.test'],
      ['url:https', '//x.test'],
    ])
  })

  it('keeps keys of 1-64 characters and values of at most 256', () => {
    expect(tagSplits(':v')).toEqual([])
    expect(tagSplits(`${'k'.repeat(65)}:v`)).toEqual([])
    expect(tagSplits(`k:${'v'.repeat(257)}`)).toEqual([])
    // The first colon leaves a value too long; the second a key of 3 and a value of 256.
    expect(tagSplits(`k:a:${'v'.repeat(256)}`)).toEqual([['k:a', 'v'.repeat(256)]])
  })

  it('refuses a tag that no reading fits', () => {
    for (const tag of ['nocolon', ':v', `${'k'.repeat(65)}:v`, `k:${'v'.repeat(320)}`]) {
      expect(ListEmailsQuery.safeParse({ tag }).success, tag).toBe(false)
    }
    expect(ListEmailsQuery.safeParse({ tag: `k:a:${'v'.repeat(256)}` }).success).toBe(true)
  })

  it('takes a value with line breaks, which a send stores in a tag', () => {
    for (const tag of ['k:a\nb', 'k:a\r\nb', 'k:a\u2028b', '\n:v']) {
      expect(ListEmailsQuery.safeParse({ tag }).success, JSON.stringify(tag)).toBe(true)
    }
  })
})
