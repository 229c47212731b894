import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Field, LoadMore, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { relative } from '../lib/format.js'
import { navigate, useLocation, withQuery } from '../lib/router.js'
import type { Audience, Contact, Page as ListPage } from '../lib/types.js'
import { useAllPages, usePagedList } from '../lib/use-pages.js'
import { useAction } from '../lib/use-resource.js'

function AddContact({
  slug,
  audiences,
  onAdded,
}: {
  slug: string
  audiences: Audience[]
  onAdded: () => void
}) {
  const [email, setEmail] = useState('')
  const [firstName, setFirst] = useState('')
  const [lastName, setLast] = useState('')
  const [audienceIds, setAudienceIds] = useState<string[]>([])
  const notify = useNotify()
  const action = useAction(async () => {
    const body: Record<string, unknown> = { email }
    if (firstName) body.firstName = firstName
    if (lastName) body.lastName = lastName
    if (audienceIds.length) body.audienceIds = audienceIds
    const c = await api.post<Contact>(paths.mirror(slug, 'contacts'), body)
    notify(`${c.email} saved`)
    setEmail('')
    setFirst('')
    setLast('')
    onAdded()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Add a contact">
      <div className="form-row">
        <Field label="Email">
          {(id) => (
            <input id={id} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          )}
        </Field>
        <Field label="First name">
          {(id) => <input id={id} value={firstName} onChange={(e) => setFirst(e.target.value)} />}
        </Field>
        <Field label="Last name">
          {(id) => <input id={id} value={lastName} onChange={(e) => setLast(e.target.value)} />}
        </Field>
      </div>
      {audiences.length > 0 && (
        <fieldset className="events">
          <legend>Audiences</legend>
          <div className="check-grid">
            {audiences.map((a) => (
              <label key={a.id} className="check">
                <input
                  type="checkbox"
                  checked={audienceIds.includes(a.id)}
                  onChange={() =>
                    setAudienceIds(
                      audienceIds.includes(a.id)
                        ? audienceIds.filter((x) => x !== a.id)
                        : [...audienceIds, a.id],
                    )
                  }
                />{' '}
                {a.name}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <FormError error={action.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy}>
          Save contact
        </button>
      </div>
    </form>
  )
}

export function ContactsPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const [q, setQ] = useState('')
  // In the URL (`?audience=`), so that an audience's contact count can link to its contacts.
  const audienceId = useLocation().query.get('audience') ?? ''
  const setAudienceId = (audience: string) =>
    navigate(withQuery(`projects/${encodeURIComponent(slug)}/contacts`, { audience }), { replace: true })
  // Every audience, not only the first page: the picker must offer each one.
  const audiences = useAllPages(
    (cursor) => api.get<ListPage<Audience>>(paths.mirror(slug, 'audiences'), { limit: 100, cursor }),
    [slug],
  )
  const contacts = usePagedList(
    (cursor) =>
      api.get<ListPage<Contact>>(paths.mirror(slug, 'contacts'), { limit: 100, q, audienceId, cursor }),
    [slug, q, audienceId],
  )
  const notify = useNotify()
  const toggle = useAction(async (c: Contact) => {
    await api.patch(paths.mirror(slug, `contacts/${paths.enc(c.id)}`), { unsubscribed: !c.unsubscribed })
    notify(c.unsubscribed ? `${c.email} resubscribed` : `${c.email} unsubscribed`)
    contacts.reload()
  })
  const list = audiences.data?.data ?? []
  return (
    <Page title="Contacts" lead={`People ${slug} can send broadcasts to.`}>
      <Section title="Add or update a contact">
        <AddContact slug={slug} audiences={list} onAdded={contacts.reload} />
      </Section>
      <Section title="Contacts">
        <div className="form-row">
          <Field label="Search">
            {(id) => <input id={id} type="search" value={q} onChange={(e) => setQ(e.target.value)} />}
          </Field>
          <Field label="Audience">
            {(id) => (
              <select id={id} value={audienceId} onChange={(e) => setAudienceId(e.target.value)}>
                <option value="">Any audience</option>
                {list.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <FormError error={toggle.error} />
        <AsyncView
          resource={contacts}
          what="contacts"
          empty={<p>No contacts{q || audienceId ? ' match' : ' yet'}.</p>}
        >
          {(page) => (
            <>
              <Table caption="Contacts">
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Name</th>
                    <th scope="col">Subscription</th>
                    <th scope="col">Added</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((c) => (
                    <tr key={c.id}>
                      <td className="break">{c.email}</td>
                      <td>{[c.firstName, c.lastName].filter(Boolean).join(' ') || '—'}</td>
                      <td>
                        <Badge
                          value={c.unsubscribed ? 'canceled' : 'active'}
                          label={c.unsubscribed ? 'unsubscribed' : 'subscribed'}
                        />
                      </td>
                      <td>{relative(c.createdAt)}</td>
                      <td className="row-actions">
                        <button
                          type="button"
                          className="btn small"
                          onClick={() => void toggle.run(c)}
                          disabled={toggle.busy}
                        >
                          {c.unsubscribed ? 'Resubscribe' : 'Unsubscribe'}
                        </button>
                        <ConfirmButton
                          small
                          danger
                          label="Delete"
                          title={`Delete ${c.email}?`}
                          body={<p>The contact leaves every audience.</p>}
                          onConfirm={async () => {
                            await api.del(paths.mirror(slug, `contacts/${paths.enc(c.id)}`))
                            notify('Contact deleted')
                            contacts.reload()
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              <LoadMore list={contacts} />
            </>
          )}
        </AsyncView>
      </Section>
    </Page>
  )
}
