import { type FormEvent, useState } from 'react'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Field, LoadMore, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { relative } from '../lib/format.js'
import { Link, navigate } from '../lib/router.js'
import type { Page as ListPage, Template, TemplateSummary } from '../lib/types.js'
import { usePagedList } from '../lib/use-pages.js'
import { useAction } from '../lib/use-resource.js'

function CreateTemplate({ slug }: { slug: string }) {
  const [name, setName] = useState('')
  const [subject, setSubject] = useState('')
  const [html, setHtml] = useState('<p>Hello {{name}}</p>')
  const notify = useNotify()
  const action = useAction(async () => {
    const t = await api.post<Template>(paths.mirror(slug, 'templates'), {
      name,
      subject: subject || undefined,
      html,
    })
    notify(`Template ${t.name} created`)
    navigate(`projects/${encodeURIComponent(slug)}/templates/${encodeURIComponent(t.name)}`)
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Create a template">
      <Field label="Name" hint="Lower-case letters, digits, _ and -; sends refer to it by name.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            required
            pattern="[a-z0-9][a-z0-9_\-]{0,99}"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        )}
      </Field>
      <Field label="Subject">
        {(id) => (
          <input
            id={id}
            value={subject}
            onChange={(e) => setSubject(e.target.value)}
            placeholder="Welcome, {{name}}"
          />
        )}
      </Field>
      <Field label="HTML" hint="Handlebars: {{x}} is escaped, {{{x}}} is not.">
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            rows={6}
            required
            value={html}
            onChange={(e) => setHtml(e.target.value)}
          />
        )}
      </Field>
      <FormError error={action.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy}>
          Create template
        </button>
      </div>
    </form>
  )
}

export function TemplatesPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const [q, setQ] = useState('')
  const list = usePagedList(
    (cursor) =>
      api.get<ListPage<TemplateSummary>>(paths.mirror(slug, 'templates'), { limit: 100, q, cursor }),
    [slug, q],
  )
  const [creating, setCreating] = useState(false)
  return (
    <Page
      title="Templates"
      lead={`Reusable, versioned email content of ${slug}.`}
      actions={
        <button
          type="button"
          className="btn primary"
          aria-expanded={creating}
          onClick={() => setCreating((c) => !c)}
        >
          {creating ? 'Close' : 'New template'}
        </button>
      }
    >
      {creating && (
        <Section title="New template">
          <CreateTemplate slug={slug} />
        </Section>
      )}
      <Section title="Templates">
        <div className="form-row">
          <Field label="Name contains">
            {(id) => <input id={id} type="search" value={q} onChange={(e) => setQ(e.target.value)} />}
          </Field>
        </div>
        <AsyncView resource={list} what="templates" empty={<p>No templates{q ? ' match' : ' yet'}.</p>}>
          {(page) => (
            <>
              <Table caption="Templates">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Subject</th>
                    <th scope="col">Version</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((t) => (
                    <tr key={t.id}>
                      <td>
                        <Link
                          to={`projects/${encodeURIComponent(slug)}/templates/${encodeURIComponent(t.name)}`}
                        >
                          {t.name}
                        </Link>
                      </td>
                      <td>{t.subject ?? '—'}</td>
                      <td>v{t.version}</td>
                      <td>{relative(t.updatedAt)}</td>
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
