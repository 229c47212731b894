import type { EmailStatus, EmailSummary, MailerEvent, SendEmailInput } from '@mailer/client'
import { type Command, InvalidArgumentError } from 'commander'
import { action, intOption } from '../context.js'
import { UsageError } from '../exit.js'
import { type Column, record, table } from '../output.js'

export const emailColumns: Column<EmailSummary>[] = [
  ['id', (e) => e.id],
  ['status', (e) => e.status],
  ['to', (e) => e.to],
  ['subject', (e) => e.subject],
  ['created', (e) => e.createdAt],
]
export const eventColumns: Column<MailerEvent>[] = [
  ['id', (e) => e.id],
  ['type', (e) => e.type],
  ['email', (e) => e.data.emailId],
  ['recipient', (e) => e.data.recipient],
  ['created', (e) => e.createdAt],
]

const collect = (value: string, previous: string[] = []) => [...previous, value]
function tag(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=')
  if (eq < 1) throw new InvalidArgumentError('tags are key=value')
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) }
}
function json(value: string): Record<string, unknown> {
  try {
    return JSON.parse(value) as Record<string, unknown>
  } catch {
    throw new InvalidArgumentError('must be JSON')
  }
}

interface SendOpts {
  project?: string
  from?: string
  to: string[]
  cc?: string[]
  subject?: string
  text?: string
  html?: string
  template?: string
  data?: Record<string, unknown>
  tag?: Record<string, string>
  scheduledAt?: string
  idempotencyKey?: string
}

export function emailCommands(program: Command): void {
  program
    .command('send')
    .description(
      'Send an email (a test email unless you give content): project key, or --project with the admin key',
    )
    .option('--project <slug>', 'send through the admin mirror of this project')
    .option('--from <address>', 'sender on a domain of the project (default: the project’s defaultFrom)')
    .requiredOption('--to <address>', 'recipient (repeat for more)', collect)
    .option('--cc <address>', 'copy (repeat for more)', collect)
    .option(
      '--subject <text>',
      'subject (with --template: instead of the template’s)',
      'Test email from the mailer CLI',
    )
    .option('--text <text>', 'plain-text body')
    .option('--html <html>', 'HTML body')
    .option('--template <name>', 'a template instead of a body')
    .option('--data <json>', 'template variables as JSON', json)
    .option('--tag <key=value>', 'tag (repeat for more)', tag)
    .option('--scheduled-at <iso>', 'send later (ISO 8601 with offset)')
    .option('--idempotency-key <key>', 'repeat-safe key')
    .action(
      action(async (ctx, o: SendOpts) => {
        if (o.data && !o.template) throw new UsageError('--data fills a template: give --template <name> too')
        // A template brings its own subject: the CLI's default one would replace it, but a
        // --subject the user typed wins over the template's, as `subject` does in the API.
        const subject = !o.template || ctx.given('subject') ? { subject: o.subject } : {}
        const input: SendEmailInput = {
          to: o.to,
          ...(o.from ? { from: o.from } : {}),
          ...(o.cc ? { cc: o.cc } : {}),
          ...subject,
          ...(o.template ? { template: o.template, data: o.data ?? {} } : {}),
          ...(o.html ? { html: o.html } : {}),
          ...(o.text || (!o.html && !o.template)
            ? { text: o.text ?? 'This is a test email sent with the mailer CLI.' }
            : {}),
          ...(o.tag ? { tags: o.tag } : {}),
          ...(o.scheduledAt ? { scheduledAt: o.scheduledAt } : {}),
        }
        const r = await ctx
          .scope(o.project)
          .emails.send(input, o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {})
        ctx.out.print(r, () => `${r.id}  ${r.status}${r.idempotent ? '  (idempotent repeat)' : ''}`)
      }),
    )

  const emails = program.command('emails').description('Emails: project key, or --project with the admin key')
  emails
    .command('list')
    .description('List emails, newest first')
    .option('--project <slug>')
    .option('--status <status>')
    .option('--to <address>')
    .option('--q <text>', 'subject contains')
    .option('--limit <n>', '1-100', intOption('--limit'))
    .option('--cursor <cursor>', 'nextCursor of the previous page')
    .action(
      action(
        async (
          ctx,
          o: {
            project?: string
            status?: EmailStatus
            to?: string
            q?: string
            limit?: number
            cursor?: string
          },
        ) => {
          const { project, ...query } = o
          // With only the admin key and no --project: every project's emails.
          const r = ctx.acrossProjects(project)
            ? await ctx.admin().emails.list(query)
            : await ctx.scope(project).emails.list(query)
          ctx.out.print(
            r,
            () => table(r.data, emailColumns) + (r.nextCursor ? `\n\nmore: --cursor ${r.nextCursor}` : ''),
          )
        },
      ),
    )
  emails
    .command('get <emailId>')
    .description('Show an email with its recipients and timeline')
    .option('--project <slug>')
    .action(
      action(async (ctx, id: string, o: { project?: string }) => {
        const e = await ctx.scope(o.project).emails.get(id)
        ctx.out.print(e, () => {
          const { recipients, events, ...rest } = e
          const who = table(recipients, [
            ['recipient', (r) => r.address],
            ['kind', (r) => r.kind],
            ['status', (r) => r.status],
            ['smtp', (r) => r.smtpResponse],
          ])
          const when = table(events, [
            ['type', (x) => x.type],
            ['recipient', (x) => x.recipient],
            ['at', (x) => x.createdAt],
          ])
          return `${record(rest as unknown as Record<string, unknown>)}\n\n${who}\n\n${when}`
        })
      }),
    )

  const events = program
    .command('events')
    .description('The event log: project key, or --project with the admin key')
  events
    .command('list')
    .description('List events, newest first')
    .option('--project <slug>')
    .option('--type <type>', 'e.g. email.delivered')
    .option('--email-id <id>')
    .option('--limit <n>', '1-100', intOption('--limit'))
    .option('--cursor <cursor>')
    .action(
      action(
        async (
          ctx,
          o: { project?: string; type?: string; emailId?: string; limit?: number; cursor?: string },
        ) => {
          const { project, ...query } = o
          const r = ctx.acrossProjects(project)
            ? await ctx.admin().events.list(query)
            : await ctx.scope(project).events.list(query)
          ctx.out.print(
            r,
            () => table(r.data, eventColumns) + (r.nextCursor ? `\n\nmore: --cursor ${r.nextCursor}` : ''),
          )
        },
      ),
    )
}
