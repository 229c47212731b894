import { type FormEvent, useState } from 'react'
import { useNotify } from '../components/notices.js'
import { Empty, FormError } from '../components/states.js'
import { Badge, Field } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatDate, formatMs, isoToLocal, json, localToIso } from '../lib/format.js'
import type { TimelineEvent } from '../lib/types.js'
import { useAction } from '../lib/use-resource.js'

/** A one-line reading of an event's data; the full data stays one click away. */
function summary(e: TimelineEvent): string {
  const d = e.data as Record<string, any>
  // Not sent: the address went on the suppression list after the email was accepted.
  if (d.suppression) return `not sent: on the suppression list (${d.suppression.reason ?? '?'})`
  if (d.delivery)
    return `${d.delivery.smtpResponse ?? d.delivery.status ?? ''} · ${formatMs(d.delivery.deliveryTimeMs)}`
  if (d.bounce) return `${d.bounce.type}: ${d.bounce.reason ?? ''}`
  if (e.type === 'email.retrying')
    return `${d.code ?? ''} ${d.message ?? ''} · retry in ${d.delaySeconds ?? '?'} s`
  if (e.type === 'email.failed') return `${d.code ?? ''} ${d.message ?? ''}`
  if (e.type === 'email.sent' && d.messageId) return `message ${d.messageId}`
  if (e.type === 'email.clicked' && d.url) return String(d.url)
  if (e.type === 'email.scheduled' && d.scheduledAt) return `for ${formatDate(String(d.scheduledAt))}`
  return ''
}

export function Timeline({ events }: { events: TimelineEvent[] }) {
  if (events.length === 0) return <Empty>No events yet.</Empty>
  return (
    <ol className="timeline" data-testid="timeline">
      {events.map((e) => (
        <li key={e.id}>
          <div className="timeline-head">
            <Badge value={e.type.replace(/^email\./, '')} label={e.type} />
            <time dateTime={e.createdAt}>{formatDate(e.createdAt)}</time>
            {e.recipient && <span className="muted">{e.recipient}</span>}
          </div>
          {summary(e) && <p className="small">{summary(e)}</p>}
          <details>
            <summary>Event data</summary>
            <pre>{json(e.data)}</pre>
          </details>
        </li>
      ))}
    </ol>
  )
}

export function Reschedule({
  id,
  project,
  scheduledAt,
  onDone,
}: {
  id: string
  project: string | null
  scheduledAt: string | null
  onDone: () => void
}) {
  const [when, setWhen] = useState(isoToLocal(scheduledAt))
  const notify = useNotify()
  const action = useAction(async () => {
    await api.patch(paths.email(id, project), { scheduledAt: localToIso(when) })
    notify('Email rescheduled')
    onDone()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-row" onSubmit={submit} aria-label="Reschedule">
      <Field label="Send at" hint="Your local time; at most 30 days ahead.">
        {(fid, hint) => (
          <input
            id={fid}
            aria-describedby={hint}
            type="datetime-local"
            required
            value={when}
            onChange={(e) => setWhen(e.target.value)}
          />
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="btn" disabled={action.busy}>
          Reschedule
        </button>
      </div>
      <FormError error={action.error} />
    </form>
  )
}
