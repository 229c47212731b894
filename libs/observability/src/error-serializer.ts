/**
 * The `err` field of every log line. pino's standard serializer writes an error's whole message
 * and stack, its causes' too: a Prisma error's message carries a code frame of the generated
 * client (tens of KB of minified source) or the query's arguments whole (an email body), so one
 * failed query made a log line of 30-80 KB, which log pipelines truncate or drop. This keeps what
 * says what went wrong (type, code, Prisma's `meta`, the message's last paragraph, a few stack
 * frames, the causes) within ERR_LOG_MAX_BYTES, and takes the login out of any URL in it.
 */

/** Most bytes the serialized `err` of one log line takes. */
export const ERR_LOG_MAX_BYTES = 2048

const MESSAGE_MAX = 600
const FIELD_MAX = 400
const STACK_FRAMES = 6
const CAUSE_DEPTH = 3

/**
 * `scheme://user:password@` and `scheme://token@`: DATABASE_URL, NATS_URL and SMTP_URL logins,
 * which can be KB long (a cloud IAM token as the password, a NATS JWT as the token). Linear on a
 * message of many KB: a login cannot hold `/`, so the run scanned after each `://` ends before the
 * next one.
 */
const URL_LOGIN = /\b([a-z][a-z0-9+.-]{0,30}:\/\/)[^\s@/?#]{1,8192}@/gi
/** Prisma's "Invalid `prisma.project.create()` invocation in <file>:<line>" / "invocation:" head. */
const PRISMA_HEAD = /^\s*(Invalid `[^`\n]{0,200}` invocation)/
const CODE_FRAME_LINE = /^\s*(→\s*)?\d+ /

const scrubLogins = (s: string): string => s.replace(URL_LOGIN, '$1[redacted]@')

/** As pino's own serializer tells: an Error, or an object shaped like one (another realm's). */
const isErrorLike = (v: unknown): v is Error =>
  v instanceof Error || (typeof v === 'object' && v !== null && typeof (v as Error).message === 'string')

const clip = (s: string, max: number): string =>
  s.length > max ? `${s.slice(0, max)}… [${s.length - max} more]` : s

/**
 * The message without what makes Prisma's long: its head names the call, its last paragraph
 * says what was wrong ("The table `x` does not exist", "Argument `id`: Invalid value provided");
 * between them sit the code frame and the arguments, which are dropped.
 */
function summarizeMessage(message: string): string {
  const head = PRISMA_HEAD.exec(message)?.[1]
  let text = message.trim()
  if (head) {
    // Code-frame lines ("  24 …", "→ 27 …") can run straight into the reason, with no blank line.
    const paragraphs = text
      .split('\n')
      .filter((l) => !CODE_FRAME_LINE.test(l))
      .join('\n')
      .split(/\n\s*\n/)
    const last = paragraphs.length > 1 ? paragraphs.at(-1)!.trim() : ''
    text = last ? `${head}: ${last}` : head
  }
  return clip(scrubLogins(text), MESSAGE_MAX)
}

/** The stack's frames only (its first lines repeat the message): the first few, scrubbed. */
function summarizeStack(err: Error): string | undefined {
  if (typeof err.stack !== 'string') return undefined
  const frames = err.stack
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, STACK_FRAMES)
    .map((l) => clip(l.trim(), 160))
  return scrubLogins(frames.join('\n'))
}

/** A property as is when small, else as clipped JSON; strings scrubbed either way. */
function summarizeField(value: unknown): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value
  if (typeof value === 'string') return clip(scrubLogins(value), FIELD_MAX)
  if (typeof value === 'bigint') return String(value)
  if (typeof value !== 'object') return undefined
  let json: string
  try {
    json = scrubLogins(JSON.stringify(value) ?? '')
  } catch {
    return '[unserializable]'
  }
  return json.length <= FIELD_MAX ? JSON.parse(json) : clip(json, FIELD_MAX)
}

const OWN = new Set(['message', 'stack', 'cause', 'errors', 'name'])

function summarize(err: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: typeof err.constructor === 'function' && err.constructor.name ? err.constructor.name : err.name,
    message: summarizeMessage(String(err.message ?? '')),
  }
  for (const key of Object.keys(err)) {
    if (OWN.has(key)) continue
    const v = summarizeField((err as unknown as Record<string, unknown>)[key])
    if (v !== undefined) out[key] = v
  }
  const stack = summarizeStack(err)
  if (stack) out.stack = stack
  const cause = (err as { cause?: unknown }).cause
  if (cause !== undefined && depth < CAUSE_DEPTH)
    out.cause = isErrorLike(cause) ? summarize(cause, depth + 1) : summarizeField(cause)
  if (Array.isArray((err as { errors?: unknown }).errors))
    out.errors = ((err as AggregateError).errors as unknown[])
      .slice(0, 3)
      .map((e) => (isErrorLike(e) ? summarize(e, CAUSE_DEPTH) : summarizeField(e)))
  return out
}

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

/** pino serializer for `err`: errors summarized, strings scrubbed and clipped, the rest as given. */
export function serializeError(err: unknown): unknown {
  if (typeof err === 'string') return clip(scrubLogins(err), MESSAGE_MAX)
  if (!isErrorLike(err)) return err
  let out: Record<string, unknown>
  try {
    out = summarize(err, 0)
  } catch {
    return { type: 'Error', message: summarizeMessage(String(err?.message ?? err)) }
  }
  // Past the budget, give up the least telling parts first: the frames, the causes, the rest.
  for (const drop of ['stack', 'errors', 'cause']) {
    if (size(out) <= ERR_LOG_MAX_BYTES) return out
    delete out[drop]
  }
  if (size(out) <= ERR_LOG_MAX_BYTES) return out
  const { type, message, code } = out
  return { type, message, ...(code === undefined ? {} : { code }), truncated: true }
}
