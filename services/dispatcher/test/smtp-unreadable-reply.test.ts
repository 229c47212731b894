import { Metrics } from '@mailer/observability'
import { afterEach, describe, expect, it } from 'vitest'
import { SmtpConnection, SmtpConnectionError } from '../src/infra/smtp/connection.js'
import { closeAll, message, opts, relayClient, scripted } from './smtp-fixtures.js'

// An unreadable line from the relay is quoted (its first 200 characters) in the error, which
// becomes the recipients' reply text: kept in events and last_error, both written as jsonb, which
// refuses a lone surrogate. The quote must not end in half an emoji.
afterEach(closeAll)

const LONE = /\p{Cs}/u
/** A greeting that is no SMTP reply, with an emoji across its 200th character. */
const GARBAGE = `${'x'.repeat(199)}😀 and more`

describe('an unreadable reply from the relay', () => {
  it('is quoted without splitting an emoji', async () => {
    const server = await scripted(() => undefined, GARBAGE)
    const err = await SmtpConnection.open(opts(server.port)).catch((e) => e)
    expect(err).toBeInstanceOf(SmtpConnectionError)
    expect(err.message).toBe(`unreadable reply from the relay: ${'x'.repeat(199)}`)
    expect(LONE.test(err.message)).toBe(false)
  })

  it('gives every recipient a reply text that can be stored', async () => {
    const server = await scripted(() => undefined, GARBAGE)
    const relay = relayClient(server.port, new Metrics('relay_unreadable'))
    const [reply] = await relay.deliver('email_1', { from: 'a@sender.test', to: ['b@x.test'] }, message())
    expect(reply).toMatchObject({ stage: 'connection', code: null })
    expect(reply!.text).toBe(`unreadable reply from the relay: ${'x'.repeat(199)}`)
    expect(LONE.test(reply!.text)).toBe(false)
  })
})
