import { truncate } from '@mailer/contracts'
import type { SmtpReply } from './smtp-transaction.js'

const REPLY_LINE = /^(\d{3})([ -]?)(.*)$/

/** Longest reply kept (its lines together, or a line without its end): far beyond any EHLO. */
const MAX_REPLY = 64 * 1024

/**
 * Turns the text a relay sends into whole replies (RFC 5321 4.2.1): the lines of a multi-line
 * reply (`250-…` up to `250 …`) make one, joined by \n. The SMTP session feeds it what its socket
 * reads and hands each reply to the command waiting for it.
 */
export class ReplyLines {
  private pending = ''
  private lines: string[] = []
  private size = 0

  /** Nothing read that is not part of a whole reply yet. */
  get empty(): boolean {
    return this.pending === '' && this.lines.length === 0
  }

  /**
   * The replies `chunk` completes, in order. `error` when the relay sent a line that is no reply or
   * a reply too long to keep: the session must end there (nothing after it is read).
   */
  push(chunk: string): { replies: SmtpReply[]; error: string | null } {
    const replies: SmtpReply[] = []
    this.pending += chunk
    for (let nl = this.pending.indexOf('\n'); nl !== -1; nl = this.pending.indexOf('\n')) {
      // A NUL from a broken relay (or half an emoji where the quote below is cut: `truncate`) would make
      // the reply, kept as smtp_response and in events, unstorable: the outcome could never be recorded.
      const line = this.pending.slice(0, nl).replace(/\r$/, '').replaceAll('\u0000', '\uFFFD')
      this.pending = this.pending.slice(nl + 1)
      const m = REPLY_LINE.exec(line)
      if (!m) return { replies, error: `unreadable reply from the relay: ${truncate(line, 200)}` }
      this.lines.push(line)
      this.size += line.length + 1
      if (this.size > MAX_REPLY) return { replies, error: 'reply too long' }
      if (m[2] === '-') continue
      replies.push({ code: Number(m[1]), text: this.lines.join('\n') })
      this.lines = []
      this.size = 0
    }
    return { replies, error: this.pending.length > MAX_REPLY ? 'reply line too long' : null }
  }
}
