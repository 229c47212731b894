import { MailerError } from '@mailer/contracts'

/** The MailerError `fn` throws (the tests assert its code and param); anything else fails. */
export function errorOf(fn: () => unknown): MailerError {
  try {
    fn()
  } catch (e) {
    if (e instanceof MailerError) return e
    throw e
  }
  throw new Error('expected a MailerError')
}
