import { describe, expect, it } from 'vitest'
import { relayAnswered, repliesFromError, repliesFromInfo } from './smtp-replies.js'

describe('repliesFromInfo', () => {
  it('gives accepted recipients the final DATA answer and refused ones their RCPT answer', () => {
    const replies = repliesFromInfo(['a@x.test', 'b@x.test'], {
      accepted: ['a@x.test'],
      rejected: ['b@x.test'],
      rejectedErrors: [
        {
          message: 'Recipient command failed',
          recipient: 'b@x.test',
          responseCode: 550,
          response: '550 5.1.1 No such user',
        },
      ],
      response: '250 2.0.0 Ok: queued as ABC',
    })
    expect(replies).toEqual([
      { address: 'a@x.test', stage: 'message', code: 250, text: '250 2.0.0 Ok: queued as ABC' },
      { address: 'b@x.test', stage: 'rcpt', code: 550, text: '550 5.1.1 No such user' },
    ])
  })
})

describe('repliesFromError', () => {
  it('every recipient refused at RCPT TO keeps its own answer', () => {
    const err = {
      message: "Can't send mail - all recipients were rejected",
      code: 'EENVELOPE',
      command: 'RCPT TO',
      responseCode: 550,
      rejectedErrors: [
        { message: 'x', recipient: 'a@x.test', responseCode: 550, response: '550 no a' },
        { message: 'x', recipient: 'b@x.test', responseCode: 451, response: '451 later b' },
      ],
    }
    expect(repliesFromError(['a@x.test', 'b@x.test'], err).map((r) => [r.stage, r.code, r.text])).toEqual([
      ['rcpt', 550, '550 no a'],
      ['rcpt', 451, '451 later b'],
    ])
  })

  it('an answer to MAIL FROM or DATA concerns the whole message', () => {
    const err = {
      message: 'Message failed',
      code: 'EMESSAGE',
      command: 'DATA',
      responseCode: 451,
      response: '451 4.7.1 quota exceeded',
    }
    expect(repliesFromError(['a@x.test'], err)).toEqual([
      { address: 'a@x.test', stage: 'message', code: 451, text: '451 4.7.1 quota exceeded' },
    ])
    expect(relayAnswered(err)).toBe(true)
  })

  it('a dropped connection, a time-out or an open breaker is about the relay and counts against it', () => {
    const dropped = { message: 'Connection closed unexpectedly', code: 'ECONNECTION', command: 'CONN' }
    expect(repliesFromError(['a@x.test'], dropped)).toEqual([
      {
        address: 'a@x.test',
        stage: 'connection',
        code: null,
        text: 'ECONNECTION: Connection closed unexpectedly',
      },
    ])
    expect(relayAnswered(dropped)).toBe(false)
    expect(
      relayAnswered({ message: 'Invalid login', code: 'EAUTH', command: 'AUTH PLAIN', responseCode: 535 }),
    ).toBe(false)
    expect(
      repliesFromError(['a@x.test'], { message: 'Breaker is open', code: 'EOPENBREAKER' })[0],
    ).toMatchObject({
      stage: 'connection',
      code: null,
      text: 'relay unavailable (circuit breaker open)',
    })
  })
})
