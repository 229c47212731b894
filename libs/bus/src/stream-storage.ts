import { ConfigError } from '@mailer/config'
import { NatsError } from 'nats'

/** JetStream's JSStorageResourcesExceededErr: "insufficient storage resources available". */
const STORAGE_RESOURCES_EXCEEDED = 10047

const GIB = 1024 ** 3
const MIB = 1024 ** 2
const size = (bytes: number): string =>
  bytes % GIB === 0 ? `${bytes / GIB} GiB` : bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`

/**
 * A stream JetStream has no room for, as the ConfigError to stop with (exit 78 in main.ts), or
 * undefined for any other error. A stream with a byte limit (TRACKING's 1 GiB) reserves it from the
 * server's `max_file_store` when it is created, and again when the server restores it at a
 * restart; a server whose limit is smaller (NATS's default is 75 % of the volume's free space at
 * start) refuses it, and the service used to exit 1 with an unhandled NatsError stack. Waiting
 * does not help: the server's (or its account's) storage limit is the setting to change.
 */
export function storageProblem(
  err: unknown,
  stream: string,
  maxBytes: number | undefined,
): ConfigError | undefined {
  if (!(err instanceof NatsError)) return undefined
  const noRoom =
    err.api_error?.err_code === STORAGE_RESOURCES_EXCEEDED || /insufficient storage/i.test(err.message)
  if (!noRoom) return undefined
  const reserves = maxBytes ? `, which reserves its max_bytes (${size(maxBytes)})` : ''
  return new ConfigError(
    ['NATS_URL'],
    `Invalid configuration:\n  NATS_URL: the NATS server has no JetStream file storage for stream ${stream}${reserves} (${err.message}): raise the server's max_file_store (or its account's storage limit); with the chart's bundled NATS, set nats.persistence.size to 2Gi or more (docs/operations.md, NATS streams and retention)`,
  )
}
