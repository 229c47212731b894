const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A header value as its sender wrote it. Node reads header bytes as Latin-1, so a client sending
 * UTF-8 (`Idempotency-Key: clé-1`, as curl and fetch-like clients do) arrived as `clÃ©-1`: a key
 * longer than it was (the 256-character limit counted bytes) and not the same key as the body's
 * `idempotencyKey: "clé-1"`. Bytes that form valid UTF-8 are read as UTF-8; anything else stays
 * Latin-1, as before.
 */
export function headerText(value: string): string {
  // Nothing above 0x7f: the same in both readings.
  if (!/[\x80-\xff]/.test(value)) return value
  try {
    return UTF8.decode(Buffer.from(value, 'latin1'))
  } catch {
    return value
  }
}
