import { useTestEnv, waitFor } from '@mailer/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { type SpawnedService, spawnService } from '../support/processes.js'
import { Stack } from '../support/stack.js'
import { EventPublisher, fakeId, insertWebhook, makeEvent, Receiver, sql } from '../support/webhooks.js'

/**
 * SIGTERM while a service holds work that does not end before SHUTDOWN_TIMEOUT_SECONDS (here a
 * webhook endpoint that never answers, within a WEBHOOK_TIMEOUT_MS longer than the shutdown): the
 * drain is cut off in time to close NATS and the database, and the process exits 0 by itself.
 * The drain's deadline was the exit timer's: the timer won, and the process exited 1 without
 * closing anything.
 */
const te = useTestEnv()
const stack = new Stack(te)
const spawned: SpawnedService[] = []
const receivers: Receiver[] = []

afterAll(async () => {
  for (const s of spawned) await s.kill()
  for (const r of receivers) await r.close()
})

function terminate(s: SpawnedService): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)))
  s.proc.kill('SIGTERM')
  return exited
}

describe('shutdown past its drain deadline', () => {
  it('webhook: an attempt that outlasts the drain is cut off, connections closed, exit 0', async () => {
    const receiver = await Receiver.start(() => 'hang')
    receivers.push(receiver)
    const projectId = fakeId('proj')
    await insertWebhook(te, { projectId, url: receiver.url(), secret: 'whsec_cutoff' })
    const s = await spawnService(
      'webhook',
      stack.env({
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_TIMEOUT_MS: '60000',
        SHUTDOWN_TIMEOUT_SECONDS: '8',
      }),
    )
    spawned.push(s)
    const events = await EventPublisher.connect(te)
    try {
      await events.publish(projectId, makeEvent())
      await waitFor(() => receiver.requests.length === 1, { what: 'an attempt in flight' })
    } finally {
      await events.close()
    }
    expect(await terminate(s)).toBe(0)
    const messages = s.logs.map((l) => l.msg)
    expect(messages).toContain('drain did not finish in time; closing connections')
    expect(messages).toContain('drained, exiting')
    expect(messages).not.toContain('drain took too long, exiting')
    // The attempt was given up, not recorded: the delivery is still to be made.
    const rows = await sql(te, 'SELECT status FROM webhook_deliveries')
    expect(rows.map((r: { status: string }) => r.status)).toEqual(['pending'])
  }, 60_000)
})
