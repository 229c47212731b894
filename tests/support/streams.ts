import { type EventMessage, EventsOnStream } from '@mailer/contracts'
import type { TestEnv } from '@mailer/testing'
import { connect } from 'nats'

export interface StreamMessage {
  subject: string
  msgId: string | undefined
  data: any
}

/**
 * Every message now stored in one of the test file's JetStream streams (`EMAILS`, `EVENTS`,
 * `TRACKING`: what its work queue still holds), read by sequence; the subject comes back without the file's NATS prefix.
 */
export async function streamMessages(
  te: TestEnv,
  stream: 'EMAILS' | 'EVENTS' | 'TRACKING',
): Promise<StreamMessage[]> {
  const nc = await connect({ servers: te.natsUrl })
  try {
    const jsm = await nc.jetstreamManager()
    const name = `${te.natsPrefix.toUpperCase()}_${stream}`
    const { state } = await jsm.streams.info(name)
    const out: StreamMessage[] = []
    if (state.messages === 0) return out
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(name, { seq }).catch(() => null)
      if (!m) continue
      out.push({
        subject: m.subject.slice(te.natsPrefix.length + 1),
        msgId: m.header?.get('Nats-Msg-Id'),
        data: m.json(),
      })
    }
    return out
  } finally {
    await nc.close()
  }
}

/** The events now on the EVENTS stream, whichever shape carried them (one event, or a group). */
export async function streamEvents(te: TestEnv): Promise<EventMessage[]> {
  return (await streamMessages(te, 'EVENTS')).flatMap((m) => EventsOnStream.parse(m.data))
}
