import { type FormEvent, useState } from 'react'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Field, LoadMore, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { relative } from '../lib/format.js'
import { Link, navigate } from '../lib/router.js'
import type { Audience, Broadcast, BroadcastSummary, Page as ListPage } from '../lib/types.js'
import { useAllPages, usePagedList } from '../lib/use-pages.js'
import { useAction } from '../lib/use-resource.js'
import { Progress } from './broadcast.js'

function CreateBroadcast({
  slug,
  audiences,
  audiencesRead,
}: {
  slug: string
  audiences: Audience[]
  /** The audiences were read (none is then really none, not "not loaded yet"). */
  audiencesRead: boolean
}) {
  const [f, setF] = useState({
    name: '',
    audienceId: '',
    from: '',
    subject: '',
    html: '<p>Hello {{first_name}}</p>\n<p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
  })
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value })
  const action = useAction(async () => {
    const b = await api.post<Broadcast>(paths.mirror(slug, 'broadcasts'), { ...f, name: f.name || null })
    navigate(`projects/${encodeURIComponent(slug)}/broadcasts/${encodeURIComponent(b.id)}`)
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Create a broadcast draft">
      <div className="form-row">
        <Field label="Name (optional)">
          {(id) => <input id={id} value={f.name} onChange={set('name')} />}
        </Field>
        <Field label="Audience">
          {(id) => (
            <select id={id} required value={f.audienceId} onChange={set('audienceId')}>
              <option value="">Choose an audience</option>
              {audiences.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} ({a.contactCount})
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {audiencesRead && audiences.length === 0 && (
        // Without this the only choice is "Choose an audience" and the form cannot be sent.
        <p className="notice-inline" role="status">
          A broadcast goes to an audience, and {slug} has none yet:{' '}
          <Link to={`projects/${encodeURIComponent(slug)}/audiences`}>create an audience</Link>, then add
          contacts to it.
        </p>
      )}
      <Field label="From">
        {(id) => (
          <input
            id={id}
            required
            value={f.from}
            onChange={set('from')}
            placeholder="News <news@example.com>"
          />
        )}
      </Field>
      <Field label="Subject">
        {(id) => <input id={id} required value={f.subject} onChange={set('subject')} />}
      </Field>
      <Field
        label="HTML"
        hint="Variables: the contact's data, first_name, last_name, email, unsubscribe_url."
      >
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            rows={6}
            className="code"
            required
            value={f.html}
            onChange={set('html')}
          />
        )}
      </Field>
      <FormError error={action.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy}>
          Save draft
        </button>
      </div>
    </form>
  )
}

export function BroadcastsPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  // Every audience, not only the first page: the picker must offer each one.
  const audiences = useAllPages(
    (cursor) => api.get<ListPage<Audience>>(paths.mirror(slug, 'audiences'), { limit: 100, cursor }),
    [slug],
  )
  // Polled so that running broadcasts show their progress.
  const list = usePagedList(
    (cursor) => api.get<ListPage<BroadcastSummary>>(paths.mirror(slug, 'broadcasts'), { limit: 50, cursor }),
    [slug],
    4000,
  )
  const [creating, setCreating] = useState(false)
  return (
    <Page
      title="Broadcasts"
      lead={`One email to every contact of an audience of ${slug}.`}
      actions={
        <button
          type="button"
          className="btn primary"
          aria-expanded={creating}
          onClick={() => setCreating((c) => !c)}
        >
          {creating ? 'Close' : 'New broadcast'}
        </button>
      }
    >
      {creating && (
        <Section title="New broadcast">
          <CreateBroadcast
            slug={slug}
            audiences={audiences.data?.data ?? []}
            audiencesRead={audiences.data !== undefined}
          />
          {audiences.error && <FormError error={audiences.error} />}
        </Section>
      )}
      <Section title="Broadcasts">
        <AsyncView resource={list} what="broadcasts" empty={<p>No broadcasts yet.</p>}>
          {(page) => (
            <>
              <Table caption="Broadcasts">
                <thead>
                  <tr>
                    <th scope="col">Broadcast</th>
                    <th scope="col">Status</th>
                    <th scope="col">Progress</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((b) => (
                    <tr key={b.id}>
                      <td>
                        <Link
                          to={`projects/${encodeURIComponent(slug)}/broadcasts/${encodeURIComponent(b.id)}`}
                        >
                          {b.name || b.subject}
                        </Link>
                      </td>
                      <td>
                        <Badge value={b.status} />
                      </td>
                      <td>
                        <Progress counts={b.counts} compact />
                      </td>
                      <td>{relative(b.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              <LoadMore list={list} />
            </>
          )}
        </AsyncView>
      </Section>
    </Page>
  )
}
