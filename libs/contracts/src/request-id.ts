/**
 * The X-Request-Id a caller sends (HTTP header, or NATS header on RPC) is the request's id
 * (interface.md part 1: "that value is used"): 1-200 printable ASCII characters, spaces inside
 * included, none at either end. Anything else (longer, a control or non-ASCII character) gets a
 * fresh id: a line break cannot travel on in a NATS header, and logs and error messages quote it.
 */
export const USABLE_REQUEST_ID = /^[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?$/

/** A fresh request id, for a request that brought none (or none usable). */
export const newRequestId = (): string => `req_${crypto.randomUUID().replaceAll('-', '')}`

/** The caller's id when usable, else undefined. */
export const usableRequestId = (given: string | undefined | null): string | undefined =>
  given && USABLE_REQUEST_ID.test(given) ? given : undefined

/** The caller's id when usable, else a fresh one. */
export const requestIdFor = (given: string | undefined | null): string =>
  usableRequestId(given) ?? newRequestId()
