import { describe, expect, it } from 'vitest'
import { relativeBase } from './static.js'

describe('relativeBase', () => {
  it('climbs back to the dashboard root from any depth', () => {
    expect(relativeBase('')).toBe('./')
    expect(relativeBase('emails')).toBe('./')
    expect(relativeBase('emails/')).toBe('../')
    expect(relativeBase('emails/email_1')).toBe('../')
    expect(relativeBase('projects/acme/keys')).toBe('../../')
  })
})
