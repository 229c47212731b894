/**
 * A small MIME reader for checking raw messages as a receiving server sees them (RFC 5322, 2045,
 * 2046, 2047): header fields exactly as written, the part tree, and each leaf decoded from its
 * transfer encoding, so tests can check the wire format itself rather than what a lenient parser
 * makes of it.
 */

export interface Field {
  /** Lower case. */
  name: string
  /** Unfolded (RFC 5322 2.2.3: the CRLFs removed), as written: encoded words left encoded. */
  value: string
  /** The field's lines as written, folding included. */
  lines: string[]
}

export interface Part {
  fields: Field[]
  /** The body as written (latin1: one character per byte). */
  body: string
  /** `type/subtype`, lower case; text/plain when absent (RFC 2045 5.2). */
  type: string
  parts: Part[]
}

export function headerFields(head: string): Field[] {
  const out: Field[] = []
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && out.length > 0) {
      const f = out[out.length - 1]!
      f.lines.push(line)
      f.value += line
    } else if (line !== '') {
      const colon = line.indexOf(':')
      out.push({
        name: line.slice(0, colon).toLowerCase(),
        value: line.slice(colon + 1).trim(),
        lines: [line],
      })
    }
  }
  return out
}

export const field = (p: Pick<Part, 'fields'>, name: string): string | undefined =>
  p.fields.find((f) => f.name === name)?.value.trim()

/** A parameter of a structured field (`boundary`, `charset`, `name`), quotes removed. */
export function param(value: string | undefined, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}=("([^"]*)"|[^;\\s]+)`, 'i').exec(value ?? '')
  return m ? (m[2] ?? m[1]) : undefined
}

/** Parses a raw message (CRLF line ends) into its part tree. */
export function parseMime(raw: string): Part {
  const split = raw.indexOf('\r\n\r\n')
  const head = split === -1 ? raw : raw.slice(0, split)
  const body = split === -1 ? '' : raw.slice(split + 4)
  const fields = headerFields(head)
  const ct = field({ fields }, 'content-type') ?? 'text/plain'
  const type = ct.split(';')[0]!.trim().toLowerCase()
  const parts: Part[] = []
  const boundary = param(ct, 'boundary')
  if (type.startsWith('multipart/') && boundary) {
    const chunks = body.split(`--${boundary}`)
    // chunks[0] is the preamble; the one starting with `--` after the closing delimiter is the epilogue.
    for (const chunk of chunks.slice(1)) {
      if (chunk.startsWith('--')) break
      parts.push(parseMime(chunk.replace(/^\r\n/, '').replace(/\r\n$/, '')))
    }
  }
  return { fields, body, type, parts }
}

/** Every part, depth first. */
export const allParts = (p: Part): Part[] => [p, ...p.parts.flatMap(allParts)]

/** A leaf's content, decoded from its Content-Transfer-Encoding. */
export function decodedBody(p: Part): Buffer {
  const cte = (field(p, 'content-transfer-encoding') ?? '7bit').toLowerCase()
  if (cte === 'base64') return Buffer.from(p.body.replace(/\s+/g, ''), 'base64')
  if (cte === 'quoted-printable') {
    const text = p.body.replace(/=\r\n/g, '')
    return Buffer.from(
      text.replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
      'latin1',
    )
  }
  return Buffer.from(p.body, 'latin1')
}

/** RFC 2047 encoded words (`=?charset?Q|B?text?=`) in a header value. */
export const encodedWords = (value: string): string[] => value.match(/=\?[^?\s]+\?[QBqb]\?[^?\s]*\?=/g) ?? []

/** Decodes the encoded words of an unstructured value (whitespace between two of them dropped). */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?\s]+\?[QBqb]\?[^?\s]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?\s]+)\?([QBqb])\?([^?\s]*)\?=/g, (_, _cs: string, enc: string, text: string) => {
      const bytes =
        enc.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64')
          : Buffer.from(
              text
                .replace(/_/g, ' ')
                .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
              'latin1',
            )
      return bytes.toString('utf8')
    })
}

/**
 * A parameter given in RFC 2231 form (`filename*=utf-8''…` or continued as `filename*0*=`,
 * `filename*1*=`…), decoded; undefined when the parameter is not given that way.
 */
export function rfc2231(value: string | undefined, name: string): string | undefined {
  const re = new RegExp(`;\\s*${name}\\*(\\d+)?(\\*)?=("([^"]*)"|[^;\\s]+)`, 'gi')
  const segments: Array<{ n: number; text: string; encoded: boolean }> = []
  for (const m of (value ?? '').matchAll(re))
    segments.push({ n: Number(m[1] ?? 0), text: m[4] ?? m[3]!, encoded: m[2] === '*' || m[1] === undefined })
  if (!segments.length) return undefined
  segments.sort((a, b) => a.n - b.n)
  let charset = 'utf-8'
  const bytes: number[] = []
  for (const [i, s] of segments.entries()) {
    let text = s.text
    if (i === 0 && s.encoded) {
      const [cs, , rest] = text.split("'")
      charset = cs || charset
      text = rest ?? ''
    }
    const raw = s.encoded
      ? text.replace(/%([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
      : text
    for (const ch of raw) bytes.push(ch.charCodeAt(0))
  }
  return Buffer.from(bytes).toString(charset.toLowerCase() === 'utf-8' ? 'utf8' : 'latin1')
}
