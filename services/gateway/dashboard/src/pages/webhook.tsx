import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Details, Field, LoadMore, Page, SecretOnce, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatDate, relative } from '../lib/format.js'
import { navigate } from '../lib/router.js'
import type { DataList, Page as ListPage, Webhook, WebhookDelivery, WebhookWithSecret } from '../lib/types.js'
import { usePagedList } from '../lib/use-pages.js'
import { useAction, useReloadOnChange, useResource } from '../lib/use-resource.js'
import { EventPicker } from './webhooks.js'

/**
 * Mounted once per webhook page, not per version of the webhook: Enable/Disable changes the
 * webhook under it, and remounting would throw away an endpoint URL or events being edited.
 */
function Edit({ slug, hook, onSaved }: { slug: string; hook: Webhook; onSaved: () => void }) {
  const [url, setUrl] = useState(hook.url)
  const [events, setEvents] = useState(hook.events)
  const notify = useNotify()
  const save = useAction(async () => {
    const saved = await api.patch<Webhook>(paths.mirror(slug, `webhooks/${paths.enc(hook.id)}`), {
      url,
      events,
    })
    setUrl(saved.url)
    setEvents(saved.events)
    notify('Webhook saved')
    onSaved()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void save.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Edit webhook">
      <Field label="Endpoint URL">
        {(id) => <input id={id} type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />}
      </Field>
      <EventPicker value={events} onChange={setEvents} />
      <FormError error={save.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={save.busy || events.length === 0}>
          Save changes
        </button>
      </div>
    </form>
  )
}

/**
 * An ended delivery can be sent again; a pending one that failed and waits for its next attempt
 * (up to hours later) can be attempted now, e.g. once its endpoint is fixed. One due now is being
 * attempted anyway, so it gets no button (the API would leave one in flight unchanged).
 */
function retryLabel(d: WebhookDelivery): string | null {
  if (d.status !== 'pending') return 'Retry'
  return d.nextAttemptAt && new Date(d.nextAttemptAt).getTime() > Date.now() ? 'Retry now' : null
}

function Deliveries({ slug, hook, version }: { slug: string; hook: Webhook; version: number }) {
  const base = paths.mirror(slug, `webhooks/${paths.enc(hook.id)}/deliveries`)
  // Polled: attempts and retries change on their own. An action (test event) reads the pages
  // shown again, keeping them.
  const list = usePagedList(
    (cursor) => api.get<ListPage<WebhookDelivery>>(base, { limit: 50, cursor }),
    [base],
    3000,
  )
  useReloadOnChange(version, list.reload)
  const notify = useNotify()
  const retry = useAction(async (d: WebhookDelivery) => {
    await api.post(`${base}/${paths.enc(d.id)}/retry`)
    notify('Retry queued')
    list.reload()
  })
  return (
    <Section title="Recent deliveries">
      <FormError error={retry.error} />
      <AsyncView
        resource={list}
        what="deliveries"
        empty={<p>No deliveries yet. Send a test event to try the endpoint.</p>}
      >
        {(page) => (
          <>
            <Table caption="Deliveries">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Response</th>
                  <th scope="col">When</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((d) => (
                  <tr key={d.id} data-testid="delivery-row">
                    <td>
                      {d.eventType}
                      <div className="muted small">
                        <code>{d.eventId}</code>
                      </div>
                    </td>
                    <td>
                      <Badge value={d.status} />
                    </td>
                    <td>{d.attempt}</td>
                    <td className="truncate" title={d.responseBody ?? ''}>
                      {d.responseCode ?? '—'} {d.responseBody ?? ''}
                    </td>
                    <td>
                      {relative(d.createdAt)}
                      {d.nextAttemptAt && <div className="muted small">next {relative(d.nextAttemptAt)}</div>}
                    </td>
                    <td>
                      {retryLabel(d) && (
                        <button
                          type="button"
                          className="btn small"
                          onClick={() => void retry.run(d)}
                          disabled={retry.busy || !hook.enabled}
                        >
                          {retryLabel(d)}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <LoadMore list={list} />
          </>
        )}
      </AsyncView>
    </Section>
  )
}

export function WebhookPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const id = params.id!
  const path = paths.mirror(slug, `webhooks/${paths.enc(id)}`)
  // There is no single-webhook read: the list is short and never paginated.
  const hooks = useResource(() => api.get<DataList<Webhook>>(paths.mirror(slug, 'webhooks')), [slug])
  const hook = hooks.data?.data.find((w) => w.id === id)
  const [secret, setSecret] = useState<string>()
  const [version, setVersion] = useState(0)
  const notify = useNotify()
  const act = (fn: () => Promise<unknown>) => async () => {
    await fn()
    hooks.reload()
    setVersion((v) => v + 1)
  }
  const toggle = useAction(
    act(async () => {
      await api.patch(path, { enabled: !hook!.enabled })
      notify(hook!.enabled ? 'Webhook disabled' : 'Webhook enabled')
    }),
  )
  const test = useAction(
    act(async () => {
      await api.post(`${path}/test`)
      notify('Test event sent')
    }),
  )
  return (
    <Page title="Webhook" lead={hook?.url}>
      <AsyncView
        resource={hooks}
        what="webhook"
        isEmpty={() => !hook}
        empty={<p>This webhook does not exist (any more).</p>}
      >
        {() =>
          hook && (
            <>
              <Section
                title="Endpoint"
                actions={
                  <>
                    <button
                      type="button"
                      className="btn"
                      onClick={() => void test.run()}
                      disabled={test.busy || !hook.enabled}
                    >
                      Send test event
                    </button>
                    <button
                      type="button"
                      className="btn"
                      role="switch"
                      aria-checked={hook.enabled}
                      onClick={() => void toggle.run()}
                      disabled={toggle.busy}
                    >
                      {hook.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <ConfirmButton
                      label="Rotate secret"
                      title="Rotate the signing secret?"
                      body={
                        <p>
                          The old secret stops working at once; every later delivery is signed with the new
                          one.
                        </p>
                      }
                      onConfirm={async () => {
                        const w = await api.post<WebhookWithSecret>(`${path}/rotate-secret`)
                        setSecret(w.secret)
                      }}
                    />
                    <ConfirmButton
                      danger
                      label="Delete"
                      title="Delete this webhook?"
                      body={<p>Its deliveries are deleted too.</p>}
                      onConfirm={async () => {
                        await api.del(path)
                        notify('Webhook deleted')
                        navigate(`projects/${encodeURIComponent(slug)}/webhooks`)
                      }}
                    />
                  </>
                }
              >
                {secret && (
                  <SecretOnce title="New signing secret" value={secret} onDone={() => setSecret(undefined)} />
                )}
                <FormError error={test.error ?? toggle.error} />
                <Details
                  items={[
                    ['State', <Badge key="s" value={hook.enabled ? 'enabled' : 'disabled'} />],
                    ['Id', <code key="i">{hook.id}</code>],
                    ['Created', formatDate(hook.createdAt)],
                  ]}
                />
                <Edit slug={slug} hook={hook} onSaved={hooks.reload} />
              </Section>
              <Deliveries slug={slug} hook={hook} version={version} />
            </>
          )
        }
      </AsyncView>
    </Page>
  )
}
