import { type FormEvent, useState } from 'react'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Field, Page, SecretOnce, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { relative } from '../lib/format.js'
import { Link } from '../lib/router.js'
import type { DataList, Webhook, WebhookWithSecret } from '../lib/types.js'
import { useAction, useResource } from '../lib/use-resource.js'

/** Event types a webhook can subscribe to (contract.md part 4; `email.test` never reaches one). */
export const EVENT_TYPES = [
  'email.queued',
  'email.scheduled',
  'email.sent',
  'email.retrying',
  'email.delivered',
  'email.deferred',
  'email.bounced',
  'email.complained',
  'email.rejected',
  'email.failed',
  'email.canceled',
  'email.opened',
  'email.clicked',
]

/** All events (`*`) or a chosen list, as checkboxes in a fieldset. */
export function EventPicker({ value, onChange }: { value: string[]; onChange: (v: string[]) => void }) {
  const all = value.includes('*')
  const toggle = (t: string) =>
    onChange(value.includes(t) ? value.filter((x) => x !== t) : [...value.filter((x) => x !== '*'), t])
  return (
    <fieldset className="events">
      <legend>Events</legend>
      <label className="check">
        <input type="checkbox" checked={all} onChange={() => onChange(all ? [] : ['*'])} /> Every event (*)
      </label>
      {!all && (
        <div className="check-grid">
          {EVENT_TYPES.map((t) => (
            <label key={t} className="check">
              <input type="checkbox" checked={value.includes(t)} onChange={() => toggle(t)} /> {t}
            </label>
          ))}
        </div>
      )}
    </fieldset>
  )
}

function CreateWebhook({ slug, onCreated }: { slug: string; onCreated: (w: WebhookWithSecret) => void }) {
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<string[]>(['*'])
  const action = useAction(async () => {
    onCreated(await api.post<WebhookWithSecret>(paths.mirror(slug, 'webhooks'), { url, events }))
    setUrl('')
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Create a webhook">
      <Field label="Endpoint URL" hint="http:// or https://; it must answer 2xx within 10 seconds.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            type="url"
            required
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://example.com/hooks/mailer"
          />
        )}
      </Field>
      <EventPicker value={events} onChange={setEvents} />
      <FormError error={action.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy || events.length === 0}>
          {action.busy ? 'Creating…' : 'Create webhook'}
        </button>
      </div>
    </form>
  )
}

export function WebhooksPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const hooks = useResource(() => api.get<DataList<Webhook>>(paths.mirror(slug, 'webhooks')), [slug])
  const [secret, setSecret] = useState<WebhookWithSecret>()
  const notify = useNotify()
  return (
    <Page title="Webhooks" lead={`Signed HTTP callbacks for the events of ${slug}'s emails.`}>
      <Section title="New webhook">
        {secret && (
          <SecretOnce
            title={`Signing secret of ${secret.url}`}
            value={secret.secret}
            onDone={() => setSecret(undefined)}
          />
        )}
        <CreateWebhook
          slug={slug}
          onCreated={(w) => {
            setSecret(w)
            notify('Webhook created')
            hooks.reload()
          }}
        />
      </Section>
      <Section title="Webhooks">
        <AsyncView resource={hooks} what="webhooks" empty={<p>No webhooks yet.</p>}>
          {(list) => (
            <Table caption="Webhooks">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((w) => (
                  <tr key={w.id}>
                    <td className="break">
                      <Link to={`projects/${encodeURIComponent(slug)}/webhooks/${encodeURIComponent(w.id)}`}>
                        {w.url}
                      </Link>
                    </td>
                    <td>{w.events.join(', ')}</td>
                    <td>
                      <Badge value={w.enabled ? 'enabled' : 'disabled'} />
                    </td>
                    <td>{relative(w.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </AsyncView>
      </Section>
    </Page>
  )
}
