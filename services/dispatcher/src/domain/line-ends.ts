const BARE = /\r(?!\n)|(?<!\r)\n/

/**
 * The message with every line ending as CRLF. nodemailer leaves a 7bit text part's bare LFs as
 * they were given (its SMTP transport fixed them on the wire); SMTP requires CRLF (RFC 5321
 * 2.3.8, and relays such as Postfix refuse bare newlines), and the DKIM signature must be
 * computed over the bytes that are sent. Messages without a bare CR or LF are returned as they
 * are.
 */
export function withCrlf(raw: Buffer): Buffer {
  const text = raw.toString('latin1')
  if (!BARE.test(text)) return raw
  return Buffer.from(text.replace(/\r\n|\r|\n/g, '\r\n'), 'latin1')
}
