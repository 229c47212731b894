import pino, { type DestinationStream, type Logger } from 'pino'
import { serializeError } from './error-serializer.js'

export type { Logger }

/** Paths pino blanks out wherever they appear: keys, secrets and credentials never reach logs. */
export const REDACT_PATHS = [
  'key',
  '*.key',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'dkimPrivateKey',
  '*.dkimPrivateKey',
]

/** Every service's root logger (startRuntime); `destination` is stdout unless a test gives one. */
export function createLogger(
  opts: { service: string; level?: string; version?: string },
  destination?: DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level: opts.level ?? 'info',
    base: { service: opts.service, version: opts.version ?? process.env.MAILER_VERSION ?? '0.1.0' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // A Prisma error's message holds KB of generated source or the query's arguments.
    serializers: { err: serializeError },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }
  return destination ? pino(options, destination) : pino(options)
}
