import { describe, expect, it } from 'vitest'
import { classify, enhancedStatus, isPlatformLimit, replyText } from './smtp-reply.js'

const rcpt = (code: number | null, text: string) => classify({ stage: 'rcpt', code, text })
const message = (code: number | null, text: string) => classify({ stage: 'message', code, text })
const connection = (code: number | null, text: string) => classify({ stage: 'connection', code, text })

describe('classify', () => {
  it('a 2xx at the end of DATA is a delivery', () => {
    expect(message(250, '250 2.0.0 Ok: queued as 4A1B2C')).toBe('delivered')
  })

  it('a permanent 5xx for a recipient is a hard bounce', () => {
    expect(rcpt(550, '550 5.1.1 <nobody@example.com>: Recipient address rejected: User unknown')).toBe(
      'bounced',
    )
    expect(rcpt(553, '553 5.1.3 Bad recipient address syntax')).toBe('bounced')
  })

  it('a 5xx for the whole message rejects the message, bouncing nobody', () => {
    expect(message(554, '554 5.7.1 Message rejected as spam')).toBe('message_rejected')
    expect(message(550, '550 5.7.1 Sender address not allowed')).toBe('message_rejected')
  })

  it('4xx answers, silence and dropped connections are transient', () => {
    expect(rcpt(450, '450 4.2.0 Mailbox temporarily unavailable')).toBe('transient')
    expect(message(451, '451 4.3.0 Local error in processing')).toBe('transient')
    expect(connection(null, 'ECONNECTION: Connection closed unexpectedly')).toBe('transient')
    expect(connection(null, 'relay unavailable (circuit breaker open)')).toBe('transient')
    expect(connection(421, '421 4.3.2 Service not available, closing transmission channel')).toBe('transient')
  })

  it('a 5xx before the message (greeting, AUTH) is a relay problem, not a bounce or a rejection', () => {
    expect(connection(535, '535 5.7.8 Authentication credentials invalid')).toBe('transient')
    expect(connection(554, '554 5.3.2 Service unavailable')).toBe('transient')
  })

  it('quota, rate and throttling answers are the platform limit, at any stage', () => {
    expect(message(451, '451 4.7.1 Daily sending quota exceeded')).toBe('platform_limit')
    expect(connection(421, '421 4.7.0 Rate limit reached, try again later')).toBe('platform_limit')
    expect(rcpt(452, '452 4.5.3 Throttled: too many messages')).toBe('platform_limit')
    expect(message(550, '550 5.4.5 Daily user sending limit exceeded')).toBe('platform_limit')
  })

  it('used-up credits and hourly or daily throttling are the platform limit too (SendGrid)', () => {
    expect(message(451, '451 Authentication failed: Maximum credits exceeded')).toBe('platform_limit')
    // The same refusal after AUTH, as the SMTP client reports it.
    expect(connection(451, 'AUTH PLAIN refused: 451 Authentication failed: Maximum credits exceeded')).toBe(
      'platform_limit',
    )
    expect(message(450, '450 4.7.1 Too many emails sent this hour')).toBe('platform_limit')
    expect(message(451, '451 4.7.1 Message count exceeded per day')).toBe('platform_limit')
  })

  it('"too many recipients" said of a time span or a throttle is the sending rate, not the message’s recipient count', () => {
    expect(rcpt(452, '452 Too many recipients received this hour (throttled)')).toBe('platform_limit')
    expect(rcpt(452, '452 4.5.3 Too many recipients received this hour')).toBe('platform_limit')
    expect(rcpt(451, '451 4.7.1 Too many recipients per hour, rate limited')).toBe('platform_limit')
    expect(rcpt(452, '452 4.5.3 Recipient limit exceeded, throttled')).toBe('platform_limit')
  })

  it('a full recipient mailbox is that recipient’s quota, not the platform’s', () => {
    expect(rcpt(452, '452 4.2.2 Mailbox full, quota exceeded')).toBe('transient')
    expect(rcpt(552, '552 5.2.2 User is over quota')).toBe('bounced')
  })

  it('"too many recipients" for one message defers that recipient, whatever the code or wording', () => {
    expect(rcpt(552, '552 5.5.3 Too many recipients')).toBe('transient')
    expect(rcpt(452, '452 4.5.3 Error: too many recipients')).toBe('transient')
    expect(rcpt(452, '452 4.5.3 Recipient limit exceeded')).toBe('transient')
    expect(rcpt(550, '550 Too many recipients in this message')).toBe('transient')
    expect(rcpt(552, '552 5.2.2 Mailbox full')).toBe('bounced')
  })

  it('a relay refusing to relay for us is our configuration: deferred, never a bounce', () => {
    expect(rcpt(554, '554 5.7.1 <x@y.test>: Relay access denied')).toBe('transient')
    expect(rcpt(550, '550 5.7.1 Unable to relay for x@y.test')).toBe('transient')
    expect(rcpt(550, '550 relaying denied')).toBe('transient')
    expect(rcpt(530, '530 5.7.0 Authentication required')).toBe('transient')
    // Postfix's sender, client and HELO restrictions, answered at RCPT TO (smtpd_delay_reject).
    expect(rcpt(553, '553 5.7.1 <a@acme.test>: Sender address rejected: not owned by user relay-user')).toBe(
      'transient',
    )
    expect(rcpt(554, '554 5.7.1 <mx[10.0.0.9]>: Client host rejected: Access denied')).toBe('transient')
    expect(rcpt(504, '504 5.5.2 <mailer>: Helo command rejected: need fully-qualified hostname')).toBe(
      'transient',
    )
    expect(rcpt(550, '550 5.7.1 Recipient address rejected: Access denied')).toBe('bounced')
    expect(rcpt(550, '550 5.1.1 <x@y.test>: Recipient address rejected: User unknown')).toBe('bounced')
  })

  it('the same refusals at MAIL FROM, and any 530, are our configuration too: deferred, never failed', () => {
    expect(message(530, '530 5.7.0 Authentication Required')).toBe('transient')
    expect(message(530, '530 5.7.0 Must issue a STARTTLS command first')).toBe('transient')
    expect(message(530, '530 Access denied')).toBe('transient')
    expect(
      message(553, '553 5.7.1 <a@acme.test>: Sender address rejected: not owned by user relay-user'),
    ).toBe('transient')
    expect(message(554, '554 5.7.1 Relay access denied')).toBe('transient')
    // The message itself refused stays refused.
    expect(message(554, '554 5.7.1 Message rejected as spam')).toBe('message_rejected')
  })

  it('a non-ASCII address the relay cannot take (5.6.7) fails that recipient, without bouncing it', () => {
    expect(rcpt(553, '553 5.6.7 Must declare SMTPUTF8 to send unicode address')).toBe('message_rejected')
  })

  it('words that merely contain "rate" or "limit" do not count', () => {
    expect(isPlatformLimit(451, '451 4.3.0 Temporary failure, separate issue')).toBe(false)
    expect(isPlatformLimit(451, '451 unlimited retries allowed')).toBe(false)
    expect(isPlatformLimit(550, '550 5.7.1 sending limit exceeded')).toBe(false)
    expect(isPlatformLimit(null, 'rate limit')).toBe(false)
  })
})

describe('enhancedStatus', () => {
  it('reads the RFC 3463 code after the reply code', () => {
    expect(enhancedStatus('451 4.7.1 Slow down')).toBe('4.7.1')
    expect(enhancedStatus('250-2.0.0 Ok')).toBe('2.0.0')
    expect(enhancedStatus('451 Slow down')).toBeNull()
  })
})

describe('replyText', () => {
  it('keeps a reply on one line, and cuts one over 1,000 characters to 997 and "..."', () => {
    expect(replyText('250-first\r\n250 second ')).toBe('250-first 250 second')
    expect(replyText(`550 ${'x'.repeat(2000)}`)).toBe(`550 ${'x'.repeat(993)}...`)
  })

  it('never keeps half an emoji at the cut (the text is stored in jsonb events)', () => {
    const text = replyText(`550 ${'x'.repeat(992)}😀${'y'.repeat(100)}`)
    expect(text).toBe(`550 ${'x'.repeat(992)}...`)
    expect(/\p{Cs}/u.test(text)).toBe(false)
  })
})
