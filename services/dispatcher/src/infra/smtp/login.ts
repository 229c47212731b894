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
