import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { EmailPreview } from '../components/preview.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Details, Field, Page, Section } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatCount, formatDate, localToIso } from '../lib/format.js'
import { progressOf, progressText } from '../lib/progress.js'
import { Link, navigate, withQuery } from '../lib/router.js'
import type { Audience, Broadcast } from '../lib/types.js'
import { useAction, useResource } from '../lib/use-resource.js'

/** Emails of a broadcast by outcome, as a bar and in words (the words carry the meaning). */
export function Progress({
  counts,
  target,
  compact = false,
}: {
  counts: Record<string, number>
  target?: number
  compact?: boolean
}) {
  const progress = progressOf(counts)
  const { made, done, failed, waiting } = progress
  const total = Math.max(target ?? 0, made, 1)
  const pct = (n: number) => `${(100 * n) / total}%`
  const text = progressText(progress, target)
  return (
    <div className={compact ? 'progress compact' : 'progress'}>
      <div
        className="bar"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done + failed}
        aria-valuetext={text}
      >
        <span className="seg good" style={{ width: pct(done) }} />
        <span className="seg info" style={{ width: pct(waiting) }} />
        <span className="seg bad" style={{ width: pct(failed) }} />
      </div>
      <p className="small muted">{text}</p>
    </div>
  )
}

function SendForm({ base, onSent }: { base: string; onSent: () => void }) {
  const [when, setWhen] = useState('')
  const notify = useNotify()
  const send = useAction(async () => {
    const scheduledAt = localToIso(when)
    await api.post(`${base}/send`, scheduledAt ? { scheduledAt } : {})
    notify(scheduledAt ? 'Broadcast scheduled' : 'Broadcast started')
    onSent()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void send.run()
  }
  return (
    <form className="form-row" onSubmit={submit} aria-label="Send the broadcast">
      <Field label="Send at (optional)" hint="Empty sends now.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            type="datetime-local"
            value={when}
            onChange={(e) => setWhen(e.target.value)}
          />
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="btn primary" disabled={send.busy}>
          {when ? 'Schedule' : 'Send now'}
        </button>
      </div>
      <FormError error={send.error} />
    </form>
  )
}

export function BroadcastPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const id = params.id!
  const base = paths.mirror(slug, `broadcasts/${paths.enc(id)}`)
  const [poll, setPoll] = useState(true)
  // Live progress: polled while the broadcast can still change by itself, and while emails it
  // made are still on their way (its counts are recounted in the background after it is sent).
  const bc = useResource(
    async () => {
      const b = await api.get<Broadcast>(base)
      setPoll(['scheduled', 'sending', 'paused'].includes(b.status) || progressOf(b.counts).waiting > 0)
      return b
    },
    [base],
    poll ? 2000 : undefined,
  )
  const audienceId = bc.data?.audienceId
  const audience = useResource(
    () =>
      audienceId
        ? api.get<Audience>(paths.mirror(slug, `audiences/${paths.enc(audienceId)}`))
        : Promise.resolve(undefined),
    [audienceId],
  )
  const notify = useNotify()
  const b = bc.data
  return (
    <Page
      title={b ? b.name || b.subject : 'Broadcast'}
      lead={<code>{id}</code>}
      actions={
        b && (
          <>
            {['scheduled', 'sending', 'paused'].includes(b.status) && (
              <ConfirmButton
                danger
                label="Cancel broadcast"
                title="Cancel this broadcast?"
                body={<p>Contacts not reached yet get nothing. Emails already accepted are not recalled.</p>}
                onConfirm={async () => {
                  await api.post(`${base}/cancel`)
                  notify('Broadcast canceled')
                  bc.reload()
                }}
              />
            )}
            {b.status === 'draft' && (
              <ConfirmButton
                danger
                label="Delete draft"
                title="Delete this draft?"
                body={<p>This cannot be undone.</p>}
                onConfirm={async () => {
                  await api.del(base)
                  navigate(`projects/${encodeURIComponent(slug)}/broadcasts`)
                }}
              />
            )}
          </>
        )
      }
    >
      <AsyncView resource={bc} what="broadcast" isEmpty={() => false}>
        {(b) => (
          <>
            <Section title="Progress">
              <p className="status-line">
                <Badge value={b.status} />
                {b.resumeAt && <span className="muted small"> resumes {formatDate(b.resumeAt)}</span>}
              </p>
              <Progress
                counts={b.counts}
                {...(audience.data ? { target: audience.data.contactCount } : {})}
              />
              {b.status === 'draft' && (
                <SendForm
                  base={base}
                  onSent={() => {
                    setPoll(true)
                    bc.reload()
                  }}
                />
              )}
              <Link to={withQuery('emails', { project: slug, tag: `broadcast_id:${b.id}` })}>
                See its emails
              </Link>
            </Section>
            <Section title="Message">
              <Details
                items={[
                  [
                    'Audience',
                    audience.data
                      ? `${audience.data.name} (${formatCount(audience.data.contactCount)} contacts)`
                      : b.audienceId,
                  ],
                  ['From', b.from],
                  ['Subject', b.subject],
                  ['Scheduled', formatDate(b.scheduledAt)],
                  ['Started', formatDate(b.startedAt)],
                  ['Completed', formatDate(b.completedAt)],
                ]}
              />
              <EmailPreview html={b.html} title="Broadcast preview" />
            </Section>
          </>
        )}
      </AsyncView>
    </Page>
  )
}
