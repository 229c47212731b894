import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Field, LoadMore, Page, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { relative } from '../lib/format.js'
import { Link, navigate, useLocation, withQuery } from '../lib/router.js'
import type { Page as ListPage, Suppression, SuppressionReason } from '../lib/types.js'
import { usePagedList } from '../lib/use-pages.js'
import { useAction, useReloadOnChange } from '../lib/use-resource.js'

function AddSuppression({ onAdded }: { onAdded: () => void }) {
  const [address, setAddress] = useState('')
  const [reason, setReason] = useState<SuppressionReason>('manual')
  const notify = useNotify()
  const action = useAction(async () => {
    const s = await api.post<Suppression>('v1/admin/suppressions', { address, reason })
    notify(`${s.address} suppressed`)
    setAddress('')
    onAdded()
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-row" onSubmit={submit} aria-label="Add a suppression">
      <Field label="Address">
        {(id) => (
          <input id={id} type="email" required value={address} onChange={(e) => setAddress(e.target.value)} />
        )}
      </Field>
      <Field label="Reason">
        {(id) => (
          <select id={id} value={reason} onChange={(e) => setReason(e.target.value as SuppressionReason)}>
            <option value="manual">manual</option>
            <option value="hard_bounce">hard_bounce</option>
            <option value="complaint">complaint</option>
          </select>
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy}>
          Suppress address
        </button>
      </div>
      <FormError error={action.error} />
    </form>
  )
}

/**
 * The suppressed addresses, page after page. An address added or removed (`version`) reads the
 * pages shown again from the first, so a removal on a later page keeps the operator's place.
 */
function Results({ q, version, onChanged }: { q: string; version: number; onChanged: () => void }) {
  const list = usePagedList(
    (cursor) => api.get<ListPage<Suppression>>('v1/admin/suppressions', { q, limit: 100, cursor }),
    [q],
  )
  useReloadOnChange(version, list.reload)
  const notify = useNotify()
  return (
    <AsyncView
      resource={list}
      what="suppressions"
      empty={<p>{q ? 'No suppressed address matches.' : 'No suppressed addresses.'}</p>}
    >
      {(page) => (
        <>
          <Table caption="Suppressed addresses">
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">Reason</th>
                <th scope="col">Source email</th>
                <th scope="col">Added</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((s) => (
                <tr key={s.address} data-testid="suppression-row">
                  <td className="break">{s.address}</td>
                  <td>
                    <Badge value={s.reason === 'manual' ? 'draft' : 'bounced'} label={s.reason} />
                  </td>
                  <td>
                    {s.sourceEmailId ? (
                      <Link to={`emails/${encodeURIComponent(s.sourceEmailId)}`}>{s.sourceEmailId}</Link>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>{relative(s.createdAt)}</td>
                  <td>
                    <ConfirmButton
                      small
                      danger
                      label="Remove"
                      title={`Remove ${s.address}?`}
                      body={<p>Live sends to this address are allowed again.</p>}
                      onConfirm={async () => {
                        await api.del(`v1/admin/suppressions/${paths.enc(s.address)}`)
                        notify(`${s.address} removed`)
                        onChanged()
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          <LoadMore list={list} />
        </>
      )}
    </AsyncView>
  )
}

/** The search box; remounted (`key`) when the URL's search changes, so it always shows that one. */
function SearchForm({ q }: { q: string }) {
  const [search, setSearch] = useState(q)
  const submit = (e: FormEvent) => {
    e.preventDefault()
    navigate(withQuery('suppressions', { q: search.trim() }), { replace: true })
  }
  return (
    <form className="form-row" aria-label="Search suppressed addresses" onSubmit={submit}>
      <Field label="Search addresses">
        {(id) => <input id={id} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />}
      </Field>
      <div className="actions">
        <button type="submit" className="btn">
          Search
        </button>
      </div>
    </form>
  )
}

export function SuppressionsPage() {
  const q = useLocation().query.get('q') ?? ''
  const [version, setVersion] = useState(0)
  const bump = () => setVersion((v) => v + 1)
  return (
    <Page
      title="Suppressions"
      lead="Addresses no project sends to: hard bounces, complaints and manual entries. One list for the whole deployment."
    >
      <Section title="Add an address">
        <AddSuppression onAdded={bump} />
      </Section>
      <Section title="Suppressed addresses">
        <SearchForm key={q} q={q} />
        <Results key={`results:${q}`} q={q} version={version} onChanged={bump} />
      </Section>
    </Page>
  )
}
