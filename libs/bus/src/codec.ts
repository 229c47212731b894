import { type ErrorObject, MailerError, SERVICE_ERROR_PREFIX } from '@mailer/contracts'

const enc = new TextEncoder()
const dec = new TextDecoder()

export const encodeJson = (value: unknown): Uint8Array => enc.encode(JSON.stringify(value ?? null))

/** A success reply is the JSON result; a failure is `SERVICE_ERROR:` + the error JSON. */
export function encodeError(err: MailerError): Uint8Array {
  return enc.encode(SERVICE_ERROR_PREFIX + JSON.stringify(err.toJSON()))
}

/** Decodes a reply: returns the result, or throws the MailerError it carries. */
export function decodeReply(data: Uint8Array): unknown {
  const text = dec.decode(data)
  if (text.startsWith(SERVICE_ERROR_PREFIX)) {
    const obj = JSON.parse(text.slice(SERVICE_ERROR_PREFIX.length)) as ErrorObject
    throw MailerError.from(obj)
  }
  return text.length === 0 ? undefined : JSON.parse(text)
}

export function decodeJson(data: Uint8Array): unknown {
  const text = dec.decode(data)
  return text.length === 0 ? undefined : JSON.parse(text)
}
