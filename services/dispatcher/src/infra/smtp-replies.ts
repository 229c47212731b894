import type { RecipientReply } from '../domain/smtp-reply.js'
import { replyText } from '../domain/smtp-reply.js'

/** The parts of nodemailer's success info and errors that say what the relay answered. */
export interface SmtpInfo {
  accepted?: Array<string | { address: string }>
  rejected?: Array<string | { address: string }>
  rejectedErrors?: SmtpError[]
  response?: string
}

export interface SmtpError {
  message: string
  code?: string
  command?: string
  response?: string
  responseCode?: number
  recipient?: string
  rejectedErrors?: SmtpError[]
}

/** SMTP commands whose answer is about this message or a recipient, not about the relay's health. */
const MESSAGE_COMMANDS = new Set(['MAIL FROM', 'RCPT TO', 'DATA'])

/** For the circuit breaker: the relay answered (even "no"), so it is up. */
export const relayAnswered = (err: SmtpError): boolean =>
  err.responseCode !== undefined && err.command !== undefined && MESSAGE_COMMANDS.has(err.command)

const codeOf = (text: string | undefined): number | null => {
  const m = /^(\d{3})/.exec(text?.trim() ?? '')
  return m ? Number(m[1]) : null
}

const addr = (a: string | { address: string }) => (typeof a === 'string' ? a : a.address).toLowerCase()

const fromRcptError = (address: string, err: SmtpError | undefined): RecipientReply => ({
  address,
  stage: 'rcpt',
  code: err?.responseCode ?? codeOf(err?.response),
  text: replyText(err?.response ?? err?.message ?? 'recipient rejected'),
})

/** The relay accepted the message for some recipients (others may have been refused at RCPT TO). */
export function repliesFromInfo(envelopeTo: string[], info: SmtpInfo): RecipientReply[] {
  const rejected = new Set((info.rejected ?? []).map(addr))
  const errors = new Map((info.rejectedErrors ?? []).map((e) => [e.recipient?.toLowerCase() ?? '', e]))
  const final = info.response ?? '250 OK'
  return envelopeTo.map((address) =>
    rejected.has(address.toLowerCase())
      ? fromRcptError(address, errors.get(address.toLowerCase()))
      : { address, stage: 'message', code: codeOf(final) ?? 250, text: replyText(final) },
  )
}

/** The send failed: map the error to one reply per recipient of the attempt. */
export function repliesFromError(envelopeTo: string[], err: SmtpError): RecipientReply[] {
  if (err.code === 'EOPENBREAKER') {
    return envelopeTo.map((address) => ({
      address,
      stage: 'connection',
      code: null,
      text: 'relay unavailable (circuit breaker open)',
    }))
  }
  if (err.command === 'RCPT TO' && err.rejectedErrors) {
    const errors = new Map(err.rejectedErrors.map((e) => [e.recipient?.toLowerCase() ?? '', e]))
    return envelopeTo.map((address) => fromRcptError(address, errors.get(address.toLowerCase()) ?? err))
  }
  if (relayAnswered(err)) {
    const text = replyText(err.response ?? err.message)
    return envelopeTo.map((address) => ({ address, stage: 'message', code: err.responseCode ?? null, text }))
  }
  const text = replyText(err.response ?? `${err.code ? `${err.code}: ` : ''}${err.message}`)
  return envelopeTo.map((address) => ({ address, stage: 'connection', code: err.responseCode ?? null, text }))
}
