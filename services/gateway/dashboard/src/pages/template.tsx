import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Field, Page, Section } from '../components/ui.js'
import { ApiError, api, paths } from '../lib/api.js'
import { json } from '../lib/format.js'
import { navigate } from '../lib/router.js'
import type { Template } from '../lib/types.js'
import { useAction, useResource } from '../lib/use-resource.js'
import { RenderPreview, TestSend, Versions } from './template-tools.js'

function Editor({ base, t, onSaved }: { base: string; t: Template; onSaved: () => void }) {
  const [subject, setSubject] = useState(t.subject ?? '')
  const [html, setHtml] = useState(t.html ?? '')
  const [text, setText] = useState(t.text ?? '')
  const [variables, setVariables] = useState(json(t.variables))
  // The version these edits replace. After a template_conflict it becomes the version saved
  // meanwhile, so that Save again saves the edits over it (knowingly) instead of failing until a
  // reload, which would throw the edits away.
  const [over, setOver] = useState(t.version)
  const notify = useNotify()
  const save = useAction(async () => {
    let vars: unknown
    try {
      vars = JSON.parse(variables || '[]')
    } catch {
      throw new Error('Variables must be JSON: [{ "name": "x", "required": true, "example": "…" }]')
    }
    // `version`: refused with template_conflict if someone saved in between.
    let saved: Template
    try {
      saved = await api.patch<Template>(base, {
        subject: subject || null,
        html: html || null,
        text: text || null,
        variables: vars,
        version: over,
      })
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 'template_conflict')) throw e
      const latest = await api.get<Template>(base)
      setOver(latest.version)
      throw new Error(
        `Version ${latest.version} was saved meanwhile (on another page, the API or the CLI). Your edits are kept: Save again to save them over it, or reload the page to see it (your edits are then lost).`,
      )
    }
    notify(`Saved as version ${saved.version}`)
    onSaved()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void save.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Edit template">
      <Field label="Subject">
        {(id) => <input id={id} value={subject} onChange={(e) => setSubject(e.target.value)} />}
      </Field>
      <Field label="HTML">
        {(id) => (
          <textarea
            id={id}
            rows={10}
            className="code"
            value={html}
            onChange={(e) => setHtml(e.target.value)}
          />
        )}
      </Field>
      <Field label="Text" hint="Leave empty to derive it from the HTML at each send.">
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            rows={4}
            className="code"
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        )}
      </Field>
      <Field label="Variables (JSON)" hint='[{ "name": "name", "required": true, "example": "Ann" }]'>
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            rows={4}
            className="code"
            value={variables}
            onChange={(e) => setVariables(e.target.value)}
          />
        )}
      </Field>
      <FormError error={save.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save new version'}
        </button>
      </div>
    </form>
  )
}

export function TemplatePage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const name = params.name!
  const base = paths.mirror(slug, `templates/${paths.enc(name)}`)
  const tmpl = useResource(() => api.get<Template>(base), [base])
  const [version, setVersion] = useState(0)
  const reload = () => {
    tmpl.reload()
    setVersion((v) => v + 1)
  }
  const notify = useNotify()
  return (
    <Page
      title={`Template ${name}`}
      lead={tmpl.data ? `Version ${tmpl.data.version}` : undefined}
      actions={
        <ConfirmButton
          danger
          label="Delete template"
          title={`Delete ${name}?`}
          body={
            <p>
              The template and all its versions are deleted. Sends naming it then fail with
              template_not_found.
            </p>
          }
          onConfirm={async () => {
            await api.del(base)
            notify('Template deleted')
            navigate(`projects/${encodeURIComponent(slug)}/templates`)
          }}
        />
      }
    >
      <AsyncView resource={tmpl} what="template" isEmpty={() => false}>
        {(t) => (
          <>
            <Section title="Content">
              <Editor key={t.version} base={base} t={t} onSaved={reload} />
            </Section>
            <RenderPreview base={base} t={t} />
            <TestSend slug={slug} t={t} />
            <Versions base={base} version={version} current={t.version} onRestored={reload} />
          </>
        )}
      </AsyncView>
    </Page>
  )
}
