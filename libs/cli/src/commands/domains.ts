import { type DnsRecord, type Domain, MailerApiError, type Suppression } from '@mailer/client'
import { type Command, Option } from 'commander'
import { action, type Context, intOption } from '../context.js'
import { type Column, table } from '../output.js'

const domainColumns: Column<Domain & { slug?: string | null }>[] = [
  ['domain', (d) => d.domain],
  ['verification', (d) => d.verification],
  ['checked', (d) => d.checkedAt],
  ['created', (d) => d.createdAt],
]
const recordColumns: Column<DnsRecord>[] = [
  ['type', (r) => r.type],
  ['name', (r) => r.name],
  ['status', (r) => r.status],
  ['value', (r) => r.value],
]

/** A domain and the DNS records the operator must publish. */
function showDomain(ctx: Context, d: Domain): void {
  ctx.out.print(
    d,
    () => `${d.domain}: ${d.verification}\n\nPublish these DNS records:\n${table(d.records, recordColumns)}`,
  )
}

async function findDomain(ctx: Context, slug: string, name: string, refresh: boolean): Promise<Domain> {
  const list = await ctx.admin().project(slug).domains.list({ refresh })
  const d = list.data.find((x) => x.domain === name.toLowerCase())
  if (!d) {
    const message = `Project ${slug} has no domain ${name}: run mailer domains setup ${slug} ${name}`
    throw new MailerApiError({ type: 'not_found', code: 'domain_not_found', message, status: 404 })
  }
  return d
}

export function domainCommands(program: Command): void {
  const domains = program.command('domains').description('Sending domains (admin key)')
  domains
    .command('list')
    .description('List every domain, or one project’s (--project)')
    .option('--project <slug>')
    .action(
      action(async (ctx, o: { project?: string }) => {
        const admin = ctx.admin()
        const cols: Column<Domain & { slug?: string | null }>[] = o.project
          ? domainColumns
          : [['project', (d) => d.slug], ...domainColumns]
        const r = o.project ? await admin.project(o.project).domains.list() : await admin.domains.list()
        ctx.out.print(r, () => table(r.data, cols))
      }),
    )
  domains
    .command('setup <project> <domain>')
    .description('Create the domain for a project (or show it) with its DKIM key and DNS records')
    .action(
      action(async (ctx, slug: string, domain: string) =>
        showDomain(ctx, await ctx.admin().project(slug).domains.setup(domain)),
      ),
    )
  domains
    .command('records <project> <domain>')
    .description('Show the DNS records to publish and the result of their last check')
    .action(
      action(async (ctx, slug: string, domain: string) =>
        showDomain(ctx, await findDomain(ctx, slug, domain, false)),
      ),
    )
  domains
    .command('verify <project> <domain>')
    .description('Check the DNS records now and show the result')
    .action(
      action(async (ctx, slug: string, domain: string) =>
        showDomain(ctx, await findDomain(ctx, slug, domain, true)),
      ),
    )

  const suppressions = program
    .command('suppressions')
    .description('The deployment-wide suppression list (admin key)')
  const columns: Column<Suppression>[] = [
    ['address', (s) => s.address],
    ['reason', (s) => s.reason],
    ['source email', (s) => s.sourceEmailId],
    ['since', (s) => s.createdAt],
  ]
  suppressions
    .command('list')
    .description('List suppressed addresses, newest first')
    .option('--q <text>', 'address contains')
    .option('--limit <n>', '1-200', intOption('--limit'))
    .option('--cursor <cursor>', 'nextCursor of the previous page')
    .action(
      action(async (ctx, o: { q?: string; limit?: number; cursor?: string }) => {
        const r = await ctx.admin().suppressions.list(o)
        ctx.out.print(
          r,
          () => table(r.data, columns) + (r.nextCursor ? `\n\nmore: --cursor ${r.nextCursor}` : ''),
        )
      }),
    )
  suppressions
    .command('add <address>')
    .description('Stop sending to an address')
    .addOption(
      new Option('--reason <reason>').choices(['manual', 'hard_bounce', 'complaint']).default('manual'),
    )
    .action(
      action(async (ctx, address: string, o: { reason: Suppression['reason'] }) => {
        const s = await ctx.admin().suppressions.add({ address, reason: o.reason })
        ctx.out.print(s, () => table([s], columns))
      }),
    )
  suppressions
    .command('remove <address>')
    .description('Allow sending to an address again')
    .action(
      action(async (ctx, address: string) => {
        const r = await ctx.admin().suppressions.remove(address)
        ctx.out.print(r, () => (r.deleted ? `${r.address} removed` : `${r.address} was not suppressed`))
      }),
    )
}
