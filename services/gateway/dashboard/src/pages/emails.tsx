import { type FormEvent, useState } from 'react'
import { AsyncView } from '../components/states.js'
import { Badge, Field, LoadMore, Page, Section, Table, Tags } from '../components/ui.js'
import { api } from '../lib/api.js'
import { dateToIso, relative } from '../lib/format.js'
import { newestFirst } from '../lib/live-list.js'
import { ProjectSelect, useProjects } from '../lib/projects.js'
import { Link, navigate, useLocation, withQuery } from '../lib/router.js'
import type { EmailSummary, Page as ListPage } from '../lib/types.js'
import { useLiveList } from '../lib/use-pages.js'

export const STATUSES = [
  'queued',
  'scheduled',
  'sending',
  'sent',
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'rejected',
  'failed',
  'test',
  'canceled',
]
const FILTERS = ['project', 'status', 'from', 'until', 'tag', 'to', 'q'] as const
type Filters = Record<(typeof FILTERS)[number], string>

type AdminEmailSummary = EmailSummary & { projectId: string }

/** Emails of every project, or of one (`project`), through the admin list. */
export function listEmails(f: Filters, cursor?: string): Promise<ListPage<AdminEmailSummary>> {
  return api.get('v1/admin/emails', {
    project: f.project,
    status: f.status,
    tag: f.tag,
    to: f.to,
    q: f.q,
    since: dateToIso(f.from),
    until: dateToIso(f.until, true),
    cursor,
    limit: 50,
  })
}

/** A link to an email's page; with the project known the page reads it through the mirror. */
export const emailLink = (id: string, project?: string) =>
  withQuery(`emails/${encodeURIComponent(id)}`, { project })

function FilterForm({ initial }: { initial: Filters }) {
  const [f, setF] = useState<Filters>(initial)
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    navigate(withQuery('emails', f))
  }
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter emails">
      <Field label="Project">
        {(id) => (
          <ProjectSelect
            id={id}
            value={f.project}
            onChange={(project) => setF({ ...f, project })}
            allLabel="All projects"
          />
        )}
      </Field>
      <Field label="Status">
        {(id) => (
          <select id={id} value={f.status} onChange={set('status')}>
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="From date">
        {(id) => <input id={id} type="date" value={f.from} onChange={set('from')} />}
      </Field>
      <Field label="To date">
        {(id) => <input id={id} type="date" value={f.until} onChange={set('until')} />}
      </Field>
      <Field label="Tag (key:value)">
        {(id) => <input id={id} value={f.tag} onChange={set('tag')} placeholder="plan:pro" />}
      </Field>
      <Field label="Recipient">
        {(id) => <input id={id} type="email" value={f.to} onChange={set('to')} />}
      </Field>
      <Field label="Subject contains">
        {(id) => <input id={id} type="search" value={f.q} onChange={set('q')} />}
      </Field>
      <div className="actions">
        <button type="submit" className="btn primary">
          Apply filters
        </button>
        <button type="button" className="btn" onClick={() => navigate('emails')}>
          Clear
        </button>
      </div>
    </form>
  )
}

function EmailResults({ filters }: { filters: Filters }) {
  // The first page is read again every 5 s (new emails, status changes); Load more reads on.
  const list = useLiveList((cursor) => listEmails(filters, cursor), newestFirst, 5000)
  // Items name their project by id; the project list gives its slug (for links and the column).
  const slugs = new Map((useProjects().data?.data ?? []).map((p) => [p.id, p.slug]))
  return (
    <Section title="Results">
      <AsyncView
        resource={list}
        what="emails"
        empty={<p>No emails match these filters.</p>}
        // A filter reads a bounded number of emails per page (docs/api.md, "Lists"): an empty page
        // with a cursor means none so far, not none at all.
        isEmpty={(page) => page.data.length === 0 && !page.nextCursor}
      >
        {(page) => (
          <>
            {page.data.length === 0 ? (
              <p data-testid="emails-none-yet">
                No match among the most recent emails read so far; Load more searches further back.
              </p>
            ) : (
              <Table caption="Emails">
                <thead>
                  <tr>
                    <th scope="col">Subject</th>
                    <th scope="col">To</th>
                    {!filters.project && <th scope="col">Project</th>}
                    <th scope="col">Status</th>
                    <th scope="col">Tags</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((e) => (
                    <tr key={e.id} data-testid="email-row">
                      <td>
                        <Link to={emailLink(e.id, slugs.get(e.projectId))}>
                          {e.subject || '(no subject)'}
                        </Link>
                      </td>
                      <td className="truncate">{e.to.join(', ')}</td>
                      {!filters.project && <td>{slugs.get(e.projectId) ?? '—'}</td>}
                      <td>
                        <Badge value={e.status} />
                      </td>
                      <td>
                        <Tags tags={e.tags} />
                      </td>
                      <td>{relative(e.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
            <LoadMore list={list} />
          </>
        )}
      </AsyncView>
    </Section>
  )
}

export function EmailsPage() {
  const { query } = useLocation()
  const filters = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ''])) as Filters
  const key = JSON.stringify(filters)
  return (
    <Page title="Emails" lead="Every email with its status; the list refreshes every few seconds.">
      <Section title="Filters">
        <FilterForm key={key} initial={filters} />
      </Section>
      <EmailResults key={key} filters={filters} />
    </Page>
  )
}
