import { useCallback, useEffect, useState } from 'react'
import { ConfirmButton } from '../components/confirm.js'
import { useNotify } from '../components/notices.js'
import { AsyncView } from '../components/states.js'
import { Badge, Details, Page, Section, Table, Tags } from '../components/ui.js'
import { api, paths } from '../lib/api.js'
import { formatDate, formatMs } from '../lib/format.js'
import { useProjects } from '../lib/projects.js'
import { Link, navigate, useLocation, withQuery } from '../lib/router.js'
import type { Email, SendResult } from '../lib/types.js'
import { useResource } from '../lib/use-resource.js'
import { EmailContentView } from './email-content.js'
import { Reschedule, Timeline } from './email-parts.js'

const ACTIVE = new Set(['queued', 'scheduled', 'sending', 'sent', 'deferred'])

export function EmailPage({ params }: { params: Record<string, string> }) {
  const id = params.id!
  const given = useLocation().query.get('project')
  const projects = useProjects()
  const notify = useNotify()
  // While the email is still on its way, poll so the timeline fills in by itself.
  const [polling, setPolling] = useState(true)
  // Without ?project= (a link pasted from elsewhere, the CLI) the email is read through the admin
  // route, which names its project: then cancel and reschedule, which go through the project's
  // routes, are offered all the same.
  const email = useResource(
    () => api.get<Email & { projectId?: string }>(paths.email(id, given)),
    [id, given],
    polling ? 3000 : undefined,
  )
  const projectId = email.data?.projectId
  const project =
    given ?? (projectId ? (projects.data?.data.find((p) => p.id === projectId)?.slug ?? null) : null)
  const status = email.data?.status
  const live = status !== undefined && ACTIVE.has(status)
  // Resend makes the new email from the stored content: once that is gone (content_expired, kept
  // CONTENT_RETENTION_DAYS) it is not offered, rather than failing inside its dialog.
  const [goneId, setGoneId] = useState<string | null>(null)
  const onContentExpired = useCallback(() => setGoneId(id), [id])
  useEffect(() => {
    if (status) setPolling(ACTIVE.has(status))
  }, [status])
  return (
    <Page
      title={email.data ? email.data.subject || '(no subject)' : 'Email'}
      lead={
        <>
          <code>{id}</code>
          {project && (
            <>
              {' · '}
              <Link to={`projects/${encodeURIComponent(project)}`}>{project}</Link>
            </>
          )}
        </>
      }
      actions={
        email.data && (
          <>
            {/* Cancel and reschedule go through the project's mirror: shown when the project is known. */}
            {project && (status === 'queued' || status === 'scheduled') && (
              <ConfirmButton
                danger
                label="Cancel email"
                title="Cancel this email?"
                body={<p>It will not be sent. Emails already handed to a dispatcher cannot be canceled.</p>}
                onConfirm={async () => {
                  await api.del(paths.email(id, project))
                  notify('Email canceled')
                  email.reload()
                }}
              />
            )}
            {goneId !== id && (
              <ConfirmButton
                label="Resend"
                title="Send this email again?"
                body={<p>A new email is made from the stored content and sent to the same recipients.</p>}
                onConfirm={async () => {
                  const r = await api.post<SendResult>(`v1/admin/emails/${paths.enc(id)}/resend`)
                  notify('Email resent')
                  navigate(withQuery(`emails/${encodeURIComponent(r.id)}`, { project: project ?? undefined }))
                }}
              />
            )}
          </>
        )
      }
    >
      <AsyncView resource={email} what="email" isEmpty={() => false}>
        {(e) => (
          <>
            <Section title="Summary">
              <p className="status-line">
                <Badge value={e.status} /> {live && <span className="muted small">updating…</span>}
              </p>
              <Details
                items={[
                  ['From', e.from],
                  ['To', e.to.join(', ') || '—'],
                  ...(e.cc.length ? [['Cc', e.cc.join(', ')] as [string, string]] : []),
                  ...(e.bcc.length ? [['Bcc', e.bcc.join(', ')] as [string, string]] : []),
                  ...(e.replyTo.length ? [['Reply to', e.replyTo.join(', ')] as [string, string]] : []),
                  ['Tags', <Tags key="t" tags={e.tags} />],
                  ['Mode / source', `${e.mode} · ${e.source}`],
                  ['Template', e.template ? `${e.template} v${e.templateVersion ?? '?'}` : '—'],
                  ['Created', formatDate(e.createdAt)],
                  ['Scheduled', formatDate(e.scheduledAt)],
                  ['Sent', formatDate(e.sentAt)],
                  ['Delivered', formatDate(e.deliveredAt)],
                  ['Attempts', String(e.attempts)],
                  ...(e.lastError ? [['Last error', e.lastError] as [string, string]] : []),
                ]}
              />
              {project && status === 'scheduled' && (
                <Reschedule id={id} project={project} scheduledAt={e.scheduledAt} onDone={email.reload} />
              )}
            </Section>
            <Section title="Recipients">
              <Table caption="Recipients">
                <thead>
                  <tr>
                    <th scope="col">Address</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Status</th>
                    <th scope="col">SMTP answer</th>
                    <th scope="col">Delivery time</th>
                  </tr>
                </thead>
                <tbody>
                  {e.recipients.map((r) => (
                    <tr key={`${r.kind}:${r.address}`}>
                      <td>{r.address}</td>
                      <td>{r.kind}</td>
                      <td>
                        <Badge value={r.status} />
                      </td>
                      <td className="truncate">{r.smtpResponse ?? r.smtpStatus ?? '—'}</td>
                      <td>{formatMs(r.deliveryMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            </Section>
            <Section title="Timeline">
              <Timeline events={e.events} />
            </Section>
            <EmailContentView id={id} project={given} onExpired={onContentExpired} />
          </>
        )}
      </AsyncView>
    </Page>
  )
}
