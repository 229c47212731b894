import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Field, LoadMore, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatCount, relative } from '../lib/format.js'
import { Link, withQuery } from '../lib/router.js'
import type { Audience, Page as ListPage } from '../lib/types.js'
import { usePagedList } from '../lib/use-pages.js'
import { useAction } from '../lib/use-resource.js'

export function AudiencesPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const audiences = usePagedList(
    (cursor) => api.get<ListPage<Audience>>(paths.mirror(slug, 'audiences'), { limit: 100, cursor }),
    [slug],
  )
  const [name, setName] = useState('')
  const notify = useNotify()
  const create = useAction(async () => {
    const a = await api.post<Audience>(paths.mirror(slug, 'audiences'), { name })
    notify(`Audience ${a.name} created`)
    setName('')
    audiences.reload()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void create.run()
  }
  return (
    <Page
      title="Audiences"
      lead={`Named lists of ${slug}'s contacts that broadcasts go to. Add contacts to them on the Contacts page.`}
    >
      <Section title="New audience">
        <form className="form-row" onSubmit={submit} aria-label="Create an audience">
          <Field label="Name">
            {(id) => (
              <input
                id={id}
                required
                maxLength={200}
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            )}
          </Field>
          <div className="actions">
            <button type="submit" className="btn primary" disabled={create.busy}>
              Create audience
            </button>
          </div>
          <FormError error={create.error} />
        </form>
      </Section>
      <Section title="Audiences">
        <AsyncView resource={audiences} what="audiences" empty={<p>No audiences yet.</p>}>
          {(page) => (
            <>
              <Table caption="Audiences">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Contacts</th>
                    <th scope="col">Created</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((a) => (
                    <tr key={a.id}>
                      <td>{a.name}</td>
                      <td>
                        <Link
                          to={withQuery(`projects/${encodeURIComponent(slug)}/contacts`, { audience: a.id })}
                        >
                          {formatCount(a.contactCount)}
                        </Link>
                      </td>
                      <td>{relative(a.createdAt)}</td>
                      <td>
                        <ConfirmButton
                          small
                          danger
                          label="Delete"
                          title={`Delete audience ${a.name}?`}
                          body={
                            <p>Its contacts are kept. An audience a broadcast is using cannot be deleted.</p>
                          }
                          onConfirm={async () => {
                            await api.del(paths.mirror(slug, `audiences/${paths.enc(a.id)}`))
                            notify('Audience deleted')
                            audiences.reload()
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              <LoadMore list={audiences} />
            </>
          )}
        </AsyncView>
      </Section>
    </Page>
  )
}
