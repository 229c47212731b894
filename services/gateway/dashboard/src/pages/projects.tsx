import { type FormEvent, useState } from 'react'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Field, Page, Section, Table } from '../components/ui.js'
import { api } from '../lib/api.js'
import { formatCount, relative } from '../lib/format.js'
import { useProjects } from '../lib/projects.js'
import { Link, navigate } from '../lib/router.js'
import type { DataList, Project, ProjectStats } from '../lib/types.js'
import { useAction, useReloadOnChange, useResource } from '../lib/use-resource.js'

function CreateProject({ onCreated }: { onCreated: (p: Project) => void }) {
  const [slug, setSlug] = useState('')
  const [name, setName] = useState('')
  const [dailyLimit, setDailyLimit] = useState('5000')
  const [defaultFrom, setDefaultFrom] = useState('')
  const [rpcEnabled, setRpcEnabled] = useState(true)
  const action = useAction(async () => {
    const body: Record<string, unknown> = { slug, name, dailyLimit: Number(dailyLimit), rpcEnabled }
    if (defaultFrom) body.defaultFrom = defaultFrom
    onCreated(await api.post<Project>('v1/admin/projects', body))
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-grid" onSubmit={submit} aria-label="Create a project">
      <Field label="Slug" hint="Lower-case letters, digits and dashes; used in URLs and RPC calls.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            required
            pattern="[a-z0-9][a-z0-9\-]{0,62}"
            value={slug}
            onChange={(e) => setSlug(e.target.value)}
          />
        )}
      </Field>
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
      <Field label="Default sender (optional)" hint="Used when a send leaves out `from`.">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            value={defaultFrom}
            onChange={(e) => setDefaultFrom(e.target.value)}
            placeholder="Acme <hello@acme.com>"
          />
        )}
      </Field>
      <label className="check">
        <input type="checkbox" checked={rpcEnabled} onChange={(e) => setRpcEnabled(e.target.checked)} /> RPC
        enabled
      </label>
      <FormError error={action.error} />
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create project'}
        </button>
      </div>
    </form>
  )
}

/** A status → count map in words: "12 emails: 10 delivered, 2 bounced". */
function Counts({ counts }: { counts: Record<string, number> | undefined }) {
  if (!counts) return <span className="muted">—</span>
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  const parts = Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${formatCount(n)} ${k}`)
  return <span title={parts.join(', ')}>{formatCount(total)}</span>
}

export function ProjectsPage() {
  const projects = useProjects()
  // Emails by status per project; the table shows without them if this fails. Read again every
  // 10 s (today's counts move while emails go out) and whenever the project list is read again (a
  // project created, changed or disabled), like the rest of the page.
  const stats = useResource(() => api.get<DataList<ProjectStats>>('v1/admin/stats'), [], 10_000)
  useReloadOnChange(projects.data, stats.reload)
  const byId = new Map((stats.data?.data ?? []).map((s) => [s.projectId, s]))
  const notify = useNotify()
  const [creating, setCreating] = useState(false)
  return (
    <Page
      title="Projects"
      lead="Each project is a tenant with its own keys, domains, webhooks and limits."
      actions={
        <button
          type="button"
          className="btn primary"
          aria-expanded={creating}
          onClick={() => setCreating((c) => !c)}
        >
          {creating ? 'Close' : 'New project'}
        </button>
      }
    >
      {creating && (
        <Section title="New project">
          <CreateProject
            onCreated={(p) => {
              notify(`Project ${p.slug} created`)
              projects.reload()
              navigate(`projects/${encodeURIComponent(p.slug)}`)
            }}
          />
        </Section>
      )}
      <Section title="All projects">
        <AsyncView
          resource={projects}
          what="projects"
          empty={<p>No projects yet. Create the first one to get an API key.</p>}
        >
          {(list) => (
            <Table caption="Projects">
              <thead>
                <tr>
                  <th scope="col">Project</th>
                  <th scope="col">Slug</th>
                  <th scope="col">Emails today (UTC)</th>
                  <th scope="col">Last 7 days</th>
                  <th scope="col">Daily limit</th>
                  <th scope="col">RPC</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link to={`projects/${encodeURIComponent(p.slug)}`}>{p.name}</Link>
                    </td>
                    <td>
                      <code>{p.slug}</code>
                    </td>
                    <td>
                      <Counts counts={byId.get(p.id)?.today} />
                    </td>
                    <td>
                      <Counts counts={byId.get(p.id)?.last7d} />
                    </td>
                    <td>{p.dailyLimit === 0 ? 'No limit' : formatCount(p.dailyLimit)}</td>
                    <td>{p.rpcEnabled ? 'On' : 'Off'}</td>
                    <td>
                      <Badge value={p.disabled ? 'disabled' : 'active'} />
                    </td>
                    <td>{relative(p.createdAt)}</td>
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
