import { type KeyboardEvent, useEffect, useId, useState } from 'react'
import { EmailPreview } from '../components/preview.js'
import { AsyncView, Empty } from '../components/states.js'
import { Section, Table } from '../components/ui.js'
import { ApiError, api, paths } from '../lib/api.js'
import { formatBytes } from '../lib/format.js'
import type { EmailContent } from '../lib/types.js'
import { useResource } from '../lib/use-resource.js'

const TABS = ['Preview', 'Text', 'Headers', 'Attachments'] as const
type Tab = (typeof TABS)[number]

/** WAI-ARIA tabs: arrow keys move between tabs, only the selected tab is in the tab order. */
function Tabs({ tab, onChange, idBase }: { tab: Tab; onChange: (t: Tab) => void; idBase: string }) {
  const keyDown = (e: KeyboardEvent) => {
    const i = TABS.indexOf(tab)
    const next =
      e.key === 'ArrowRight'
        ? (i + 1) % TABS.length
        : e.key === 'ArrowLeft'
          ? (i + TABS.length - 1) % TABS.length
          : -1
    if (next === -1) return
    e.preventDefault()
    onChange(TABS[next]!)
    document.getElementById(`${idBase}-tab-${next}`)?.focus()
  }
  return (
    <div role="tablist" aria-label="Email content" className="tabs" onKeyDown={keyDown}>
      {TABS.map((t, i) => (
        <button
          key={t}
          id={`${idBase}-tab-${i}`}
          type="button"
          role="tab"
          aria-selected={tab === t}
          aria-controls={`${idBase}-panel`}
          tabIndex={tab === t ? 0 : -1}
          onClick={() => onChange(t)}
        >
          {t}
        </button>
      ))}
    </div>
  )
}

function Panel({ tab, content }: { tab: Tab; content: EmailContent }) {
  if (tab === 'Preview') {
    return content.html ? <EmailPreview html={content.html} /> : <Empty>This email has no HTML part.</Empty>
  }
  if (tab === 'Text')
    return content.text ? (
      <pre className="text-body">{content.text}</pre>
    ) : (
      <Empty>This email has no text part.</Empty>
    )
  if (tab === 'Headers') {
    const entries = Object.entries(content.headers)
    if (entries.length === 0) return <Empty>No custom headers.</Empty>
    return (
      <Table caption="Custom headers">
        <tbody>
          {entries.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td className="break">{v}</td>
            </tr>
          ))}
        </tbody>
      </Table>
    )
  }
  if (content.attachments.length === 0) return <Empty>No attachments.</Empty>
  return (
    <Table caption="Attachments">
      <thead>
        <tr>
          <th scope="col">File</th>
          <th scope="col">Type</th>
          <th scope="col">Size</th>
        </tr>
      </thead>
      <tbody>
        {content.attachments.map((a, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list where names may repeat
          <tr key={i}>
            <td>{a.filename}</td>
            <td>{a.type}</td>
            <td>{formatBytes(a.size)}</td>
          </tr>
        ))}
      </tbody>
    </Table>
  )
}

/** The stored content (kept CONTENT_RETENTION_DAYS): rendered HTML, text, headers, attachments. */
export function EmailContentView({
  id,
  project,
  onExpired,
}: {
  id: string
  project: string | null
  /** Told once the API says the content is gone (the page then offers no Resend: it would fail). */
  onExpired?: () => void
}) {
  const content = useResource(
    () => api.get<EmailContent>(paths.email(id, project, '/content')),
    [id, project],
  )
  const [tab, setTab] = useState<Tab>('Preview')
  const idBase = useId()
  // Content is kept CONTENT_RETENTION_DAYS, the email itself longer: for every older email the
  // API says content_expired, which is how things are, not an error to retry.
  const expired = content.error instanceof ApiError && content.error.code === 'content_expired'
  useEffect(() => {
    if (expired) onExpired?.()
  }, [expired, onExpired])
  if (expired && !content.data)
    return (
      <Section title="Content">
        <Empty>
          Its content is no longer stored: Mailer keeps the content of an email for CONTENT_RETENTION_DAYS
          days (30 unless the operator changed it), and the email's record and timeline longer.
        </Empty>
      </Section>
    )
  return (
    <Section title="Content">
      <AsyncView resource={content} what="content" isEmpty={() => false}>
        {(c) => (
          <>
            <Tabs tab={tab} onChange={setTab} idBase={idBase} />
            <div
              id={`${idBase}-panel`}
              role="tabpanel"
              aria-labelledby={`${idBase}-tab-${TABS.indexOf(tab)}`}
              className="tab-panel"
            >
              <Panel tab={tab} content={c} />
            </div>
          </>
        )}
      </AsyncView>
    </Section>
  )
}
