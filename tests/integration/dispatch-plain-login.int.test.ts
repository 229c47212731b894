import { describe, expect, it } from 'vitest'
import { emailRows } from '../support/email-rows.js'
import { useStack } from '../support/use-stack.js'

// A relay that does not offer STARTTLS, as a man in the middle stripping it from the EHLO answer
// makes any relay look: with credentials in SMTP_URL the dispatcher logs in only when
// SMTP_STARTTLS=never says clear text is fine. Until then the emails wait for retries, as they do
// for a relay refusing the login, and the password never reaches the relay.
const PROJECT = 'proj_01KDISPATCHPLAINLOGIN00000'
const DOMAIN = 'mail.plain-login.test'

const logins: Array<{ user: string; pass: string; secure: boolean }> = []
const { relay, seed, stack } = useStack([], {
  relay: {
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth: (auth, session, cb) => {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '', secure: session.secure })
      cb(null, { user: auth.username })
    },
  },
  seed: true,
  before: (s) => s.seed.domain(PROJECT, DOMAIN),
})
const { until, timeline } = emailRows(seed)

const dispatcher = (settings: Record<string, string>) =>
  stack.start('dispatcher', {
    MAIL_TRANSPORT: 'smtp',
    SMTP_URL: `smtp://relay-user:s3cret@127.0.0.1:${relay.port}`,
    SMTP_TIMEOUT_SECONDS: '2',
    RETRY_BASE_SECONDS: '0.3',
    RETRY_MAX_SECONDS: '0.3',
    MAX_RETRIES: '20',
    BREAKER_MIN_CALLS: '10000',
    ...settings,
  })

describe('credentials and a relay without STARTTLS', () => {
  it('by default the login is not sent: the email is deferred naming SMTP_STARTTLS; with SMTP_STARTTLS=never it goes', async () => {
    await dispatcher({})
    const id = await seed.email(PROJECT, {
      from: `hi@${DOMAIN}`,
      to: ['ann@example.com'],
      subject: 'Plain',
      text: 'x',
    })
    await seed.dispatch(id, PROJECT)
    const waiting = await until(id, (r) => ['deferred', 'delivered', 'failed'].includes(r.status), 'tried')
    expect(waiting.status).toBe('deferred')
    expect(waiting.attempts).toBe(1)
    expect(waiting.last_error).toMatch(/does not offer STARTTLS.*SMTP_STARTTLS=never/)
    const [deferred] = await timeline(id)
    expect(deferred).toMatchObject({ type: 'email.deferred', recipient: 'ann@example.com' })
    expect(logins).toEqual([])
    expect(relay.delivered).toEqual([])

    // The operator says clear text is fine (a relay on the same host): the retry delivers it.
    await stack.stop('dispatcher')
    await dispatcher({ SMTP_STARTTLS: 'never' })
    const sweeper = seed.startRetrySweeper()
    try {
      const done = await until(id, (r) => r.status === 'delivered' || r.status === 'failed', 'final')
      expect(done.status).toBe('delivered')
    } finally {
      sweeper.stop()
    }
    expect(logins).toEqual([{ user: 'relay-user', pass: 's3cret', secure: false }])
    expect(relay.forEmail(id)).toHaveLength(1)
  })
})
