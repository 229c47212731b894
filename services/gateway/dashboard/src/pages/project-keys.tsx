import { type FormEvent, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView, FormError } from '../components/states.js'
import { Badge, Field, SecretOnce, Section, Table } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatDate, localToIso, relative } from '../lib/format.js'
import type { ApiKey, CreatedApiKey, DataList } from '../lib/types.js'
import { useAction, useResource } from '../lib/use-resource.js'

const keyState = (k: ApiKey): string => {
  if (k.revokedAt) return 'revoked'
  if (k.expiresAt && new Date(k.expiresAt).getTime() <= Date.now()) return 'expired'
  return 'active'
}

function CreateKey({ slug, onCreated }: { slug: string; onCreated: (k: CreatedApiKey) => void }) {
  const [name, setName] = useState('')
  const [mode, setMode] = useState<'live' | 'test'>('live')
  const [expires, setExpires] = useState('')
  const action = useAction(async () => {
    const body: Record<string, unknown> = { name, mode }
    const expiresAt = localToIso(expires)
    if (expiresAt) body.expiresAt = expiresAt
    onCreated(await api.post<CreatedApiKey>(paths.mirror(slug, 'api-keys'), body))
    setName('')
    setExpires('')
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className="form-row" onSubmit={submit} aria-label="Create an API key">
      <Field label="Key name">
        {(id) => (
          <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        )}
      </Field>
      <Field label="Mode">
        {(id) => (
          <select id={id} value={mode} onChange={(e) => setMode(e.target.value as 'live' | 'test')}>
            <option value="live">Live (sends email)</option>
            <option value="test">Test (never sends)</option>
          </select>
        )}
      </Field>
      <Field label="Expires (optional)">
        {(id) => (
          <input id={id} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="btn primary" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
      <FormError error={action.error} />
    </form>
  )
}

function Rename({ k, onDone }: { k: ApiKey; onDone: () => void }) {
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState(k.name)
  const notify = useNotify()
  const action = useAction(async () => {
    await api.patch(`v1/admin/api-keys/${paths.enc(k.id)}`, { name })
    notify('Key renamed')
    setEditing(false)
    onDone()
  })
  if (!editing) {
    return (
      <button type="button" className="btn small" onClick={() => setEditing(true)}>
        Rename
      </button>
    )
  }
  return (
    <form
      className="inline-form"
      onSubmit={(e) => {
        e.preventDefault()
        void action.run()
      }}
    >
      <label className="sr-only" htmlFor={`rename-${k.id}`}>
        New name for {k.name}
      </label>
      <input
        id={`rename-${k.id}`}
        required
        maxLength={200}
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <button type="submit" className="btn small primary" disabled={action.busy}>
        Save
      </button>
      <button type="button" className="btn small" onClick={() => setEditing(false)}>
        Cancel
      </button>
      <FormError error={action.error} />
    </form>
  )
}

/** A project's API keys: create (the full key shown once), rename, revoke. */
export function ApiKeys({ slug }: { slug: string }) {
  const keys = useResource(() => api.get<DataList<ApiKey>>('v1/admin/api-keys', { project: slug }), [slug])
  const [created, setCreated] = useState<CreatedApiKey>()
  const notify = useNotify()
  return (
    <Section title="API keys">
      {created && (
        <SecretOnce
          title={`New ${created.mode} key “${created.name}”`}
          value={created.key}
          onDone={() => setCreated(undefined)}
        />
      )}
      <CreateKey
        slug={slug}
        onCreated={(k) => {
          setCreated(k)
          keys.reload()
        }}
      />
      <AsyncView
        resource={keys}
        what="keys"
        empty={<p>No keys yet. A key lets an application send as this project.</p>}
      >
        {(list) => (
          <Table caption="API keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Mode</th>
                <th scope="col">State</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.mode}</td>
                  <td>
                    <Badge value={keyState(k)} />
                  </td>
                  <td>{k.lastUsedAt ? relative(k.lastUsedAt) : 'Never'}</td>
                  <td>{k.expiresAt ? formatDate(k.expiresAt) : 'Never'}</td>
                  <td className="row-actions">
                    {!k.revokedAt && (
                      <>
                        <Rename k={k} onDone={keys.reload} />
                        <ConfirmButton
                          small
                          danger
                          label="Revoke"
                          title={`Revoke “${k.name}”?`}
                          body={
                            <p>
                              Requests with this key fail at once with 401 revoked_api_key. This cannot be
                              undone.
                            </p>
                          }
                          onConfirm={async () => {
                            await api.del(`v1/admin/api-keys/${paths.enc(k.id)}`)
                            // A revoked key's secret is of no use: no longer offered for copying.
                            setCreated((c) => (c?.id === k.id ? undefined : c))
                            notify('Key revoked')
                            keys.reload()
                          }}
                        />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </AsyncView>
    </Section>
  )
}
