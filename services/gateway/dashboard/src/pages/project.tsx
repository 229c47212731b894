import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Details, Field, Page, Section } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatDate } from '../lib/format.js'
import { useProjects } from '../lib/projects.js'
import { Link, withQuery } from '../lib/router.js'
import type { Project } from '../lib/types.js'
import { useAction, useResource } from '../lib/use-resource.js'
import { ApiKeys } from './project-keys.js'

/**
 * Mounted once per project page, not per version of the project: a switch (RPC, disable) changes
 * the project under it, and remounting would throw away what the operator is typing here.
 */
function Settings({ project, onSaved }: { project: Project; onSaved: (p: Project) => void }) {
  const [name, setName] = useState(project.name)
  const [dailyLimit, setDailyLimit] = useState(String(project.dailyLimit))
  const [defaultFrom, setDefaultFrom] = useState(project.defaultFrom ?? '')
  const notify = useNotify()
  const save = useAction(async () => {
    const p = await api.patch<Project>(paths.project(project.slug), {
      name,
      dailyLimit: Number(dailyLimit),
      defaultFrom: defaultFrom || null,
    })
    // The fields show what was stored (a name comes back trimmed).
    setName(p.name)
    setDailyLimit(String(p.dailyLimit))
    setDefaultFrom(p.defaultFrom ?? '')
    notify('Project saved')
    onSaved(p)
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void save.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Project settings">
      <Field label="Name">
        {(id) => (
          <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        )}
      </Field>
      <Field label="Daily limit" hint="Live emails per UTC day; 0 means no limit.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            type="number"
            min={0}
            step={1}
            required
            value={dailyLimit}
            onChange={(e) => setDailyLimit(e.target.value)}
          />
        )}
      </Field>
      <Field label="Default sender" hint="Leave empty for none.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            value={defaultFrom}
            onChange={(e) => setDefaultFrom(e.target.value)}
          />
        )}
      </Field>
      <FormError error={save.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={save.busy}>
          {save.busy ? 'Saving…' : 'Save changes'}
        </button>
      </div>
    </form>
  )
}

/** The on/off switches: RPC access and the project itself. */
function Switches({ project, onSaved }: { project: Project; onSaved: (p: Project) => void }) {
  const notify = useNotify()
  const patch = (body: Partial<Project>, done: string) => async () => {
    onSaved(await api.patch<Project>(paths.project(project.slug), body))
    notify(done)
  }
  const rpc = useAction(
    patch({ rpcEnabled: !project.rpcEnabled }, project.rpcEnabled ? 'RPC turned off' : 'RPC turned on'),
  )
  return (
    <div className="switches">
      <div>
        <p>
          RPC calls: <Badge value={project.rpcEnabled ? 'enabled' : 'disabled'} />
        </p>
        <button
          type="button"
          className="btn"
          role="switch"
          aria-checked={project.rpcEnabled}
          onClick={() => void rpc.run()}
          disabled={rpc.busy}
        >
          {project.rpcEnabled ? 'Turn RPC off' : 'Turn RPC on'}
        </button>
        <FormError error={rpc.error} />
      </div>
      <div>
        <p>
          Project: <Badge value={project.disabled ? 'disabled' : 'active'} />
        </p>
        {project.disabled ? (
          <ConfirmButton
            label="Enable project"
            title={`Enable ${project.slug}?`}
            body={<p>Its API keys work again at once.</p>}
            onConfirm={patch({ disabled: false }, 'Project enabled')}
          />
        ) : (
          <ConfirmButton
            danger
            label="Disable project"
            title={`Disable ${project.slug}?`}
            body={<p>Every API key of this project gets 403 project_disabled until you enable it again.</p>}
            onConfirm={patch({ disabled: true }, 'Project disabled')}
          />
        )}
      </div>
    </div>
  )
}

export function ProjectPage({ params }: { params: Record<string, string> }) {
  const slug = params.slug!
  const projects = useProjects()
  const project = useResource(() => api.get<Project>(paths.project(slug)), [slug])
  const [saved, setSaved] = useState<Project>()
  const onSaved = (p: Project) => {
    setSaved(p)
    projects.reload()
  }
  const current = saved ?? project.data
  const e = encodeURIComponent(slug)
  return (
    <Page
      title={current ? current.name : slug}
      lead={<code>{slug}</code>}
      actions={
        <>
          <Link className="btn" to={withQuery('emails', { project: slug })}>
            Emails
          </Link>
          <Link className="btn" to={`projects/${e}/webhooks`}>
            Webhooks
          </Link>
        </>
      }
    >
      <AsyncView resource={project} what="project" isEmpty={() => false}>
        {() =>
          current && (
            <>
              <Section title="Status">
                <Switches project={current} onSaved={onSaved} />
                <Details
                  items={[
                    ['Project id', <code key="id">{current.id}</code>],
                    ['Created', formatDate(current.createdAt)],
                    ['Updated', formatDate(current.updatedAt)],
                  ]}
                />
              </Section>
              <Section title="Settings">
                <Settings project={current} onSaved={onSaved} />
              </Section>
              <ApiKeys slug={slug} />
            </>
          )
        }
      </AsyncView>
    </Page>
  )
}
