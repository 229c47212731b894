import { ConfigError } from '@mailer/config'
import { STREAMS } from '@mailer/contracts'
import { NatsError } from 'nats'
import { describe, expect, it } from 'vitest'
import type { Bus } from './bus.js'
import { storageProblem } from './stream-storage.js'
import { ensureStream } from './streams.js'

/** A JetStream API error as the nats client throws it (message, code, api_error). */
const apiError = (status: number, errCode: number, description: string) =>
  Object.assign(new NatsError(description, String(status)), {
    api_error: { code: status, err_code: errCode, description },
  })

const NO_ROOM = () => apiError(500, 10047, 'insufficient storage resources available')

/** A Bus whose JetStream has no such stream yet and answers the creation with `addFails`. */
function busRefusing(addFails: Error): Bus {
  return {
    streamName: (n: string) => n,
    subject: (s: string) => s,
    streamReplicas: undefined,
    jsm: {
      streams: {
        info: async () => {
          throw apiError(404, 10059, 'stream not found')
        },
        update: async () => undefined,
        add: async () => {
          throw addFails
        },
      },
    },
    reconnects: { declare: () => undefined },
  } as unknown as Bus
}

describe('ensureStream without room on the server', () => {
  it('stops with a ConfigError naming the stream, its reservation and the fix', async () => {
    const err = await ensureStream(busRefusing(NO_ROOM()), STREAMS.TRACKING).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ConfigError)
    const { message, variables } = err as ConfigError
    expect(variables).toEqual(['NATS_URL'])
    expect(message).toMatch(/^Invalid configuration:\n {2}NATS_URL: /)
    expect(message).toContain('stream TRACKING, which reserves its max_bytes (1 GiB)')
    expect(message).toContain('insufficient storage resources available')
    expect(message).toContain('max_file_store')
    expect(message).toContain('nats.persistence.size to 2Gi or more')
    // One problem line under the header, as the env schema's ConfigErrors print.
    expect(message.split('\n')).toHaveLength(2)
  })

  it('leaves other failures as they are', async () => {
    const replicas = apiError(500, 10074, 'replicas > 1 not supported in non-clustered mode')
    expect(await ensureStream(busRefusing(replicas), STREAMS.TRACKING).catch((e: unknown) => e)).toBe(
      replicas,
    )
    expect(storageProblem(new Error('insufficient storage'), 'X', undefined)).toBeUndefined()
    expect(storageProblem(apiError(503, 10023, 'insufficient resources'), 'X', undefined)).toBeUndefined()
  })

  it('a stream without a byte limit is named without a reservation', () => {
    // A clustered server's placement refusal says so in its message.
    const refusal = apiError(500, 10005, 'no suitable peers for placement, insufficient storage')
    const message = storageProblem(refusal, 'EVENTS', undefined)?.message ?? ''
    expect(message).toContain('stream EVENTS (no suitable peers')
    expect(message).not.toContain('reserves')
  })
})
