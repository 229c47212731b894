import { createHash, type KeyObject, sign } from 'node:crypto'

/** The sending domain's DKIM key: what the domain's DNS record (`<selector>._domainkey.<domain>`) publishes. */
export interface DkimKey {
  domainName: string
  keySelector: string
  /**
   * Parsed once per domain (infra/dkim-keys.ts): signing with the PEM text parses it on every
   * message, which costs three times the RSA signature itself (bench/README.md).
   */
  privateKey: KeyObject
}

/**
 * Header fields signed when present (RFC 6376 5.4.1: those a change of which would change what a
 * reader sees or where replies go).
 */
const SIGNED = new Set([
  'from',
  'sender',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'to',
  'cc',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-id',
  'content-description',
  'resent-date',
  'resent-from',
  'resent-sender',
  'resent-to',
  'resent-cc',
  'resent-message-id',
  'in-reply-to',
  'references',
  'list-id',
  'list-help',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'list-subscribe',
  'list-post',
  'list-owner',
  'list-archive',
])

/**
 * Header fields oversigned (RFC 6376 8.15): `h=` names each one more time than the message has
 * it, and the extra name signs a field that is not there (5.4.2). An instance someone adds later,
 * above or below ours (a Reply-To where there was none, a second Subject or From prepended to fool
 * a reader that shows the first, a Cc, a List-Unsubscribe), then breaks the signature, so that
 * no one holding a signed message can add these and have it still verify. Only fields that say who
 * wrote, to whom replies go or what the message is; the Resent-* and other List-* fields that
 * forwarders and mailing lists add on the way stay signed only where we wrote them, so such
 * copies keep verifying.
 */
const OVERSIGNED = [
  'from',
  'subject',
  'date',
  'to',
  'cc',
  'reply-to',
  'message-id',
  'in-reply-to',
  'references',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'mime-version',
  'content-type',
]

/** Relaxed header canonicalization (RFC 6376 3.4.2): lower-case name, unfolded, runs of WSP as one space. */
function relaxedHeader(name: string, value: string): string {
  return `${name.trim().toLowerCase()}:${value
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim()}\r\n`
}

/**
 * Relaxed body canonicalization (RFC 6376 3.4.4): no WSP at line ends, runs of WSP as one space,
 * no empty lines at the end, and a non-empty body ends with CRLF.
 */
export function relaxedBody(body: string): string {
  let end = body.length
  // Empty lines (and trailing WSP) at the very end go first, so the regex below sees less.
  while (end > 0) {
    const c = body.charCodeAt(end - 1)
    if (c === 0x0d || c === 0x0a || c === 0x20 || c === 0x09) end--
    else break
  }
  if (end === 0) return ''
  // One pass: a run of WSP before a line break goes, any other becomes one space. Two passes,
  // `/[ \t]+\r\n/` first, retried that pattern from every position of a long run of WSP not
  // followed by a line break (quadratic: 50 KB of spaces took 2 s).
  const text = body.slice(0, end).replace(/[ \t]+(\r\n)?/g, (_run, crlf: string | undefined) => crlf ?? ' ')
  return `${text}\r\n`
}

interface Field {
  /** Lower case. */
  name: string
  /** The whole field as it appears, folding included, without its final CRLF. */
  raw: string
}

function fields(head: string): Field[] {
  const out: Field[] = []
  for (const line of head.split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && out.length > 0)
      out[out.length - 1]!.raw += `\r\n${line}`
    else if (line.length > 0)
      out.push({
        name: line
          .slice(0, Math.max(0, line.indexOf(':')))
          .trim()
          .toLowerCase(),
        raw: line,
      })
  }
  return out
}

/** Splits a long tag value over lines (whitespace inside `b=` and `bh=` is ignored by verifiers). */
const fold = (value: string, width = 72): string =>
  value.match(new RegExp(`.{1,${width}}`, 'g'))!.join('\r\n ')

/**
 * Signs a rendered message (CRLF line ends) with DKIM, rsa-sha256, relaxed/relaxed, and returns
 * it with its `DKIM-Signature` field first. One pass over the bytes: nodemailer's signer streamed
 * the message through transforms and cost 0.13 ms per email beside the RSA signature
 * (bench/README.md).
 */
export function dkimSign(raw: Buffer, key: DkimKey): Buffer {
  // latin1 keeps every byte as one character, so 8-bit bodies hash exactly as sent.
  const text = raw.toString('latin1')
  const split = text.indexOf('\r\n\r\n')
  const head = split === -1 ? text : text.slice(0, split)
  const body = split === -1 ? '' : text.slice(split + 4)
  const bh = createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64')

  // A name listed n times signs its last n occurrences, bottom up (RFC 6376 5.4.2); OVERSIGNED
  // names come once more after those, each signing an absent field (nothing in the hash).
  const all = fields(head).filter((f) => SIGNED.has(f.name))
  const names = all.map((f) => f.name)
  const signed: string[] = []
  const used = new Set<Field>()
  for (const n of names) {
    const f = all.findLast((x) => !used.has(x) && x.name === n)!
    used.add(f)
    const colon = f.raw.indexOf(':')
    signed.push(relaxedHeader(f.raw.slice(0, colon), f.raw.slice(colon + 1)))
  }

  const tags =
    `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domainName}; q=dns/txt; s=${key.keySelector};` +
    `\r\n bh=${bh};\r\n h=${[...names, ...OVERSIGNED].join(':')}; b=`
  const header = `DKIM-Signature: ${tags}`
  const data = signed.join('') + relaxedHeader('DKIM-Signature', tags).slice(0, -2)
  const b = sign('sha256', Buffer.from(data, 'latin1'), key.privateKey).toString('base64')
  return Buffer.concat([Buffer.from(`${header}\r\n ${fold(b)}\r\n`, 'latin1'), raw])
}
