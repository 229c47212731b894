import { MailerApiError, MailerConnectionError } from '@mailer/client'
import { visible } from './output.js'

/** Exit codes scripts can rely on; 130 is the shell's own for a command ended by Ctrl-C (128 + SIGINT). */
export const EXIT = { ok: 0, api: 1, usage: 2, connection: 3, interrupted: 130 } as const

/** Ctrl-C stopped a command that runs until stopped (tail): nothing went wrong, nothing to print. */
export class Interrupted extends Error {
  override name = 'Interrupted'
}

/** A mistake in how the command was called (missing key, bad option value). */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** Prints the error to stderr and returns the exit code for it. */
export function report(err: unknown, json: boolean): number {
  if (err instanceof Interrupted) return EXIT.interrupted
  if (err instanceof MailerApiError) {
    if (json) process.stderr.write(`${JSON.stringify({ error: err.toJSON() })}\n`)
    else {
      const param = err.param ? ` (param: ${err.param})` : ''
      const rid = err.requestId ? ` [request ${err.requestId}]` : ''
      // The message may quote what a proxy answered (unexpected_response): shown, never obeyed.
      process.stderr.write(`error: ${visible(`${err.code}: ${err.message}${param}${rid}`)}\n`)
    }
    return EXIT.api
  }
  if (err instanceof MailerConnectionError) {
    process.stderr.write(`error: connection_failed: ${visible(err.message)}\n`)
    return EXIT.connection
  }
  // The SDK throws TypeError for what it refuses before any request: an id or slug of '.' or
  // '..', a key no header can carry (its message never quotes the key). Fetch failures never
  // arrive as one: the SDK makes them MailerConnectionError.
  if (err instanceof UsageError || err instanceof TypeError) {
    process.stderr.write(`error: ${err.message}\n`)
    return EXIT.usage
  }
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`)
  return EXIT.api
}
