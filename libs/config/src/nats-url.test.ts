import { describe, expect, it } from 'vitest'
import { parseNatsUrl } from './nats-url.js'

describe('parseNatsUrl', () => {
  it('passes plain URLs through', () => {
    expect(parseNatsUrl('nats://a:4222, nats://b:4222')).toEqual({
      servers: ['nats://a:4222', 'nats://b:4222'],
    })
  })
  it('takes user and password out of the URL, percent-decoded', () => {
    expect(
      parseNatsUrl('nats://mailer:p%40ss%2F1@nats.svc:4222,nats://mailer:p%40ss%2F1@nats2.svc:4222'),
    ).toEqual({
      servers: ['nats://nats.svc:4222', 'nats://nats2.svc:4222'],
      user: 'mailer',
      pass: 'p@ss/1',
    })
  })
  it('takes a token out of the URL', () => {
    expect(parseNatsUrl('tls://s3cret@nats.svc:4222')).toEqual({
      servers: ['tls://nats.svc:4222'],
      token: 's3cret',
    })
  })
  it('accepts a host without a scheme', () => {
    expect(parseNatsUrl('u:p@127.0.0.1:4222')).toEqual({ servers: ['127.0.0.1:4222'], user: 'u', pass: 'p' })
  })
})
