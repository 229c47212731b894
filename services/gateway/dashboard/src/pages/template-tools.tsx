import { type FormEvent, useEffect, useRef, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { EmailPreview } from '../components/preview.js'
import { AsyncView, FormError } from '../components/states.js'
import { Field, LoadMore, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { json, relative } from '../lib/format.js'
import { Link, withQuery } from '../lib/router.js'
import type { Page, RenderedTemplate, SendResult, Template, TemplateVersion } from '../lib/types.js'
import { usePagedList } from '../lib/use-pages.js'
import { useAction, useReloadOnChange } from '../lib/use-resource.js'

/** The declared examples as a starting point for preview and test data. */
const exampleData = (t: Template) =>
  json(Object.fromEntries(t.variables.map((v) => [v.name, v.example ?? ''])))

function parseData(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text || '{}')
    if (v && typeof v === 'object' && !Array.isArray(v)) return v
  } catch {
    /* reported below */
  }
  throw new Error('Data must be a JSON object, e.g. { "name": "Ann" }')
}

export function RenderPreview({ base, t }: { base: string; t: Template }) {
  const examples = exampleData(t)
  const [data, setData] = useState(examples)
  const [out, setOut] = useState<RenderedTemplate>()
  // A new version (saved or restored): a render of the one before is no longer what Render shows,
  // so it goes; data the operator typed stays (it went back to the examples at every save),
  // untouched examples follow the new version's variables.
  const shownExamples = useRef(examples)
  const shownVersion = useRef(t.version)
  useEffect(() => {
    if (t.version === shownVersion.current) return
    shownVersion.current = t.version
    setOut(undefined)
    setData((d) => (d === shownExamples.current ? examples : d))
    shownExamples.current = examples
  }, [t.version, examples])
  const render = useAction(async () =>
    setOut(await api.post<RenderedTemplate>(`${base}/render`, { data: parseData(data) })),
  )
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void render.run()
  }
  return (
    <Section title="Render preview">
      <form className="form-grid" onSubmit={submit} aria-label="Render preview">
        <Field label="Data (JSON)" hint="Missing keys fall back to the variables' examples.">
          {(id, hint) => (
            <textarea
              id={id}
              aria-describedby={hint}
              rows={4}
              className="code"
              value={data}
              onChange={(e) => setData(e.target.value)}
            />
          )}
        </Field>
        <FormError error={render.error} />
        <div className="actions">
          <button type="submit" className="btn" disabled={render.busy}>
            Render
          </button>
        </div>
      </form>
      {out && (
        <div className="rendered">
          <p>
            <strong>Subject:</strong> {out.subject ?? '—'}
          </p>
          {out.html && <EmailPreview html={out.html} title="Rendered template" />}
          {out.text && <pre className="text-body">{out.text}</pre>}
        </div>
      )}
    </Section>
  )
}

/** A real send through the project's admin mirror (live: limits and suppressions apply). */
export function TestSend({ slug, t }: { slug: string; t: Template }) {
  const [to, setTo] = useState('')
  const [from, setFrom] = useState('')
  const [data, setData] = useState(exampleData(t))
  const [sent, setSent] = useState<SendResult>()
  const send = useAction(async () => {
    const body: Record<string, unknown> = {
      to,
      template: t.name,
      data: parseData(data),
      tags: { dashboard: 'template-test' },
    }
    if (from) body.from = from
    setSent(await api.post<SendResult>(paths.mirror(slug, 'emails'), body))
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void send.run()
  }
  return (
    <Section title="Test send">
      <form className="form-grid" onSubmit={submit} aria-label="Test send">
        <Field label="To">
          {(id) => <input id={id} type="email" required value={to} onChange={(e) => setTo(e.target.value)} />}
        </Field>
        <Field label="From" hint="Leave empty to use the project's default sender.">
          {(id, hint) => (
            <input id={id} aria-describedby={hint} value={from} onChange={(e) => setFrom(e.target.value)} />
          )}
        </Field>
        <Field label="Data (JSON)">
          {(id) => (
            <textarea
              id={id}
              rows={3}
              className="code"
              value={data}
              onChange={(e) => setData(e.target.value)}
            />
          )}
        </Field>
        <FormError error={send.error} />
        <div className="actions">
          <button type="submit" className="btn primary" disabled={send.busy}>
            Send test email
          </button>
        </div>
      </form>
      {sent && (
        <p role="status">
          Sent:{' '}
          <Link to={withQuery(`emails/${encodeURIComponent(sent.id)}`, { project: slug })}>{sent.id}</Link> (
          {sent.status})
        </p>
      )}
    </Section>
  )
}

export function Versions({
  base,
  version,
  current,
  onRestored,
}: {
  base: string
  version: number
  current: number
  onRestored: () => void
}) {
  const list = usePagedList(
    (cursor) => api.get<Page<TemplateVersion>>(`${base}/versions`, { limit: 50, cursor }),
    [base],
  )
  // A save or restore adds a version: read the pages shown again, keeping them.
  useReloadOnChange(version, list.reload)
  const notify = useNotify()
  return (
    <Section title="Version history">
      <AsyncView resource={list} what="versions" empty={<p>No versions.</p>}>
        {(page) => (
          <>
            <Table caption="Versions">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Saved</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((v) => (
                  <tr key={v.version}>
                    <td>v{v.version}</td>
                    <td>{v.subject ?? '—'}</td>
                    <td>{relative(v.createdAt)}</td>
                    <td>
                      {v.version !== current && (
                        <ConfirmButton
                          small
                          label="Restore"
                          title={`Restore version ${v.version}?`}
                          body={<p>Its content becomes a new version; history is kept.</p>}
                          onConfirm={async () => {
                            await api.post(`${base}/restore`, { version: v.version })
                            notify(`Version ${v.version} restored`)
                            onRestored()
                          }}
                        />
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
