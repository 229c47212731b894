import type { SmtpReply } from '../../domain/smtp-transaction.js'
import { SmtpConnectionError } from './options.js'

/**
 * Logs in with AUTH PLAIN, or AUTH LOGIN where PLAIN is not offered (`methods`: what the relay's
 * EHLO listed). A refusal is a connection error carrying the relay's code.
 */
export async function login(
  auth: { user: string; pass: string },
  methods: string[],
  command: (line: string) => Promise<SmtpReply>,
): Promise<void> {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
  const expect = async (line: string, code: number, what: string) => {
    const reply = await command(line)
    if (reply.code !== code)
      throw new SmtpConnectionError(`${what} refused: ${reply.text.replace(/\s+/g, ' ')}`, reply.code)
  }
  if (methods.includes('PLAIN')) {
    await expect(`AUTH PLAIN ${b64(`\0${auth.user}\0${auth.pass}`)}`, 235, 'AUTH PLAIN')
  } else if (methods.includes('LOGIN')) {
    await expect('AUTH LOGIN', 334, 'AUTH LOGIN')
    await expect(b64(auth.user), 334, 'AUTH LOGIN')
    await expect(b64(auth.pass), 235, 'AUTH LOGIN')
  } else {
    throw new SmtpConnectionError(
      `the relay offers no AUTH method this client speaks (PLAIN, LOGIN): ${methods.join(' ') || 'none'}`,
    )
  }
}

/**
 * Credentials to send and a plain session whose relay did not offer STARTTLS: they are not sent
 * (SMTP_STARTTLS=offered). A man in the middle removing STARTTLS from the relay's EHLO answer would
 * read the password otherwise. A relay failure like a refused login: its emails wait for retries
 * and the breaker counts it.
 */
export class PlainLoginRefused extends SmtpConnectionError {
  constructor() {
    super(
      'the relay does not offer STARTTLS: the SMTP_URL credentials are not sent in clear text ' +
        '(SMTP_STARTTLS=offered); use smtps://, a relay offering STARTTLS, or SMTP_STARTTLS=never ' +
        'to log in in clear text on a network you trust',
    )
    this.name = 'PlainLoginRefused'
  }
}
