import { type FormEvent, useState } from 'react'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, CopyButton, Field, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatDate } from '../lib/format.js'
import { lastProject, ProjectSelect } from '../lib/projects.js'
import { Link } from '../lib/router.js'
import type { AdminDomain, DataList, Domain } from '../lib/types.js'
import { useAction, useResource } from '../lib/use-resource.js'

const setupPath = (slug: string, domain: string) =>
  `${paths.mirror(slug, `domains/${paths.enc(domain)}/setup`)}`

function AddDomain({ onAdded }: { onAdded: () => void }) {
  const [slug, setSlug] = useState(lastProject() ?? '')
  const [domain, setDomain] = useState('')
  const notify = useNotify()
  const action = useAction(async () => {
    const d = await api.post<Domain>(setupPath(slug, domain.trim()))
    notify(`Domain ${d.domain} set up: publish its DNS records`)
    setDomain('')
    onAdded()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-row" onSubmit={submit} aria-label="Add a domain">
      <Field label="Project">{(id) => <ProjectSelect id={id} value={slug} onChange={setSlug} />}</Field>
      <Field label="Domain">
        {(id) => (
          <input
            id={id}
            required
            value={domain}
            onChange={(e) => setDomain(e.target.value)}
            placeholder="mail.example.com"
          />
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy || !slug}>
          {action.busy ? 'Setting up…' : 'Add domain'}
        </button>
      </div>
      <FormError error={action.error} />
    </form>
  )
}

function DomainCard({ d, onChanged }: { d: AdminDomain; onChanged: () => void }) {
  const notify = useNotify()
  // Setting a domain up again re-checks its DNS records at once.
  const verify = useAction(async () => {
    const r = await api.post<Domain>(setupPath(d.slug!, d.domain))
    notify(`${r.domain}: ${r.verification}`)
    onChanged()
  })
  return (
    <Section
      title={d.domain}
      actions={
        d.slug && (
          <button type="button" className="btn" onClick={() => void verify.run()} disabled={verify.busy}>
            {verify.busy ? 'Checking…' : 'Verify DNS'}
          </button>
        )
      }
    >
      <p className="status-line">
        <Badge value={d.verification} /> Project{' '}
        {d.slug ? (
          <Link to={`projects/${encodeURIComponent(d.slug)}`}>{d.slug}</Link>
        ) : (
          <span className="muted">unknown</span>
        )}{' '}
        · last checked {d.checkedAt ? formatDate(d.checkedAt) : 'never'}
      </p>
      <FormError error={verify.error} />
      <Table caption={`DNS records of ${d.domain}`}>
        <thead>
          <tr>
            <th scope="col">Type</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {d.records.map((r) => (
            <tr key={r.name + r.value}>
              <td>{r.type}</td>
              <td className="break">
                <code>{r.name}</code>
              </td>
              <td className="break record-value">
                <code>{r.value}</code> <CopyButton text={r.value} />
              </td>
              <td>
                <Badge value={r.status} />
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
    </Section>
  )
}

export function DomainsPage() {
  const domains = useResource(() => api.get<DataList<AdminDomain>>('v1/admin/domains'), [])
  return (
    <Page
      title="Domains"
      lead="Sending domains of every project, with the DNS records to publish (DKIM, SPF, DMARC)."
    >
      <Section title="Add a domain">
        <AddDomain onAdded={domains.reload} />
      </Section>
      <AsyncView
        resource={domains}
        what="domains"
        empty={<p>No domains yet. A project can only send from its own verified domains.</p>}
      >
        {(list) =>
          list.data.map((d) => <DomainCard key={`${d.slug}:${d.domain}`} d={d} onChanged={domains.reload} />)
        }
      </AsyncView>
    </Page>
  )
}
