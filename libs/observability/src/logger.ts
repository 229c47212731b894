import pino, { type Logger } from 'pino'

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

export function createLogger(opts: { service: string; level?: string; version?: string }): Logger {
  return pino({
    level: opts.level ?? 'info',
    base: { service: opts.service, version: opts.version ?? process.env.MAILER_VERSION ?? '0.1.0' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  })
}
