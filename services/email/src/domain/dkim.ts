import { generateKeyPair } from 'node:crypto'
import { promisify } from 'node:util'

const generateKeyPairAsync = promisify(generateKeyPair)

export const DKIM_KEY_BITS = 2048

export interface DkimKey {
  /** PKCS#8 PEM, what the dispatcher signs with. */
  privateKeyPem: string
  /** Base64 DER SubjectPublicKeyInfo: the `p=` tag of the DKIM record. */
  publicKeyB64: string
}

/**
 * A fresh RSA key pair. node:crypto generates it on the libuv thread pool, so the event loop
 * keeps serving requests during the (tens to hundreds of milliseconds of) work.
 */
export async function generateDkimKey(): Promise<DkimKey> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: DKIM_KEY_BITS,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  })
  return { privateKeyPem: privateKey, publicKeyB64: publicKey.toString('base64') }
}

/**
 * `mailer` + the UTC time to the second, then `-2`, `-3`, ... while that is among `taken` (the
 * selectors other projects already use for the same domain name). Dated rather than fixed, and
 * never one in use, so that two projects sending for the same domain (set up in the same second,
 * as a script setting up staging and production does) or a later key rotation never compete for
 * one `_domainkey` name: receivers find one key there, and it would be only one project's.
 */
export function dkimSelector(now: Date, taken: ReadonlySet<string> = new Set()): string {
  const base = `mailer${now.toISOString().slice(0, 19).replace(/[-T:]/g, '')}`
  let selector = base
  for (let n = 2; taken.has(selector); n++) selector = `${base}-${n}`
  return selector
}

export const dkimRecordName = (selector: string, domain: string): string => `${selector}._domainkey.${domain}`

export const dkimRecordValue = (publicKeyB64: string): string => `v=DKIM1; k=rsa; p=${publicKeyB64}`

/**
 * Tags of a DKIM key record (RFC 6376 3.6.1): `tag=value` pairs split on `;`, names
 * case-sensitive, whitespace inside `p=` insignificant (long keys are often folded).
 */
export function parseDkimTags(txt: string): Map<string, string> {
  const tags = new Map<string, string>()
  for (const part of txt.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    if (name && !tags.has(name)) tags.set(name, part.slice(eq + 1).replace(/\s+/g, ''))
  }
  return tags
}

/** True when one of the TXT records at the DKIM name publishes exactly our RSA public key. */
export function matchesDkim(txts: string[], publicKeyB64: string): boolean {
  return txts.some((txt) => {
    const tags = parseDkimTags(txt)
    const v = tags.get('v')
    const k = tags.get('k')
    return (
      (v === undefined || v === 'DKIM1') &&
      (k === undefined || k.toLowerCase() === 'rsa') &&
      tags.get('p') === publicKeyB64
    )
  })
}
