import { type ReactNode, useId, useState } from 'react'
import { useTitle } from '../lib/router.js'
import type { PagedList } from '../lib/use-pages.js'

/** One page: its title (also the document title), actions beside it, then the content. */
export function Page({
  title,
  actions,
  children,
  lead,
}: {
  title: string
  actions?: ReactNode
  children: ReactNode
  lead?: ReactNode
}) {
  useTitle(title)
  return (
    <>
      <header className="page-head">
        <div>
          <h1 tabIndex={-1} id="page-title">
            {title}
          </h1>
          {lead && <p className="muted">{lead}</p>}
        </div>
        {actions && <div className="actions">{actions}</div>}
      </header>
      {children}
    </>
  )
}

export function Section({
  title,
  actions,
  children,
}: {
  title: string
  actions?: ReactNode
  children: ReactNode
}) {
  const id = useId()
  return (
    <section className="card" aria-labelledby={id}>
      <div className="card-head">
        <h2 id={id}>{title}</h2>
        {actions && <div className="actions">{actions}</div>}
      </div>
      {children}
    </section>
  )
}

const TONES: Record<string, string> = {
  delivered: 'good',
  sent: 'good',
  success: 'good',
  verified: 'good',
  enabled: 'good',
  active: 'good',
  live: 'good',
  queued: 'info',
  scheduled: 'info',
  sending: 'info',
  pending: 'info',
  draft: 'muted',
  test: 'muted',
  canceled: 'muted',
  disabled: 'muted',
  revoked: 'muted',
  expired: 'muted',
  paused: 'warn',
  deferred: 'warn',
  bounced: 'bad',
  complained: 'bad',
  rejected: 'bad',
  failed: 'bad',
}

/** A status as text with a colour; the text carries the meaning, the colour only helps. */
export function Badge({ value, label }: { value: string; label?: string }) {
  return <span className={`badge tone-${TONES[value] ?? 'muted'}`}>{label ?? value}</span>
}

/** Label / value pairs. */
export function Details({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="details">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  )
}

/** A labelled form control; `hint` is announced with it. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string
  hint?: string
  children: (id: string, describedBy?: string) => ReactNode
}) {
  const id = useId()
  const hintId = hint ? `${id}-hint` : undefined
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, hintId)}
      {hint && (
        <small id={hintId} className="muted">
          {hint}
        </small>
      )}
    </div>
  )
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setDone(true)
      window.setTimeout(() => setDone(false), 2000)
    } catch {
      /* clipboard refused (http, permissions): the value stays selectable on screen */
    }
  }
  return (
    <button type="button" className="btn small" onClick={copy}>
      {done ? 'Copied' : label}
    </button>
  )
}

/** A value shown once (an API key, a webhook secret), with the warning that goes with it. */
export function SecretOnce({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  return (
    <section className="secret" aria-label={title}>
      <p>
        <strong>{title}</strong>: copy it now, it will not be shown again.
      </p>
      <div className="secret-row">
        <code data-testid="secret-value">{value}</code>
        <CopyButton text={value} />
        <button type="button" className="btn small" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  )
}

/** A horizontally scrollable table wrapper (phones) with a caption for screen readers. */
export function Table({ caption, children }: { caption: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{caption}</caption>
        {children}
      </table>
    </div>
  )
}

export function Tags({ tags }: { tags: Record<string, string> }) {
  const entries = Object.entries(tags)
  if (entries.length === 0) return <span className="muted">—</span>
  return (
    <span className="tags">
      {entries.map(([k, v]) => (
        <span key={k} className="tag">
          {k}: {v}
        </span>
      ))}
    </span>
  )
}

/** The "Load more" button under a paginated list, while there is a next page. */
export function LoadMore({ list }: { list: PagedList<unknown> }) {
  if (!list.data?.nextCursor) return null
  return (
    <button type="button" className="btn" onClick={list.loadMore} disabled={list.loadingMore}>
      {list.loadingMore ? 'Loading…' : 'Load more'}
    </button>
  )
}
