import type { ApiKey, Project } from '@mailer/client'
import { type Command, Option } from 'commander'
import { action, type Context, intOption } from '../context.js'
import { type Column, record, table } from '../output.js'

const projectColumns: Column<Project>[] = [
  ['slug', (p) => p.slug],
  ['name', (p) => p.name],
  ['daily limit', (p) => (p.dailyLimit === 0 ? 'none' : p.dailyLimit)],
  ['rpc', (p) => (p.rpcEnabled ? 'on' : 'off')],
  ['state', (p) => (p.disabled ? 'disabled' : 'enabled')],
  ['default from', (p) => p.defaultFrom],
]
const keyColumns: Column<ApiKey>[] = [
  ['id', (k) => k.id],
  ['name', (k) => k.name],
  ['mode', (k) => k.mode],
  ['prefix', (k) => k.prefix],
  [
    'state',
    (k) =>
      k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? 'expired' : 'active',
  ],
  ['last used', (k) => k.lastUsedAt],
  ['expires', (k) => k.expiresAt],
]

const showProject = (ctx: Context, p: Project) =>
  ctx.out.print(p, () => record(p as unknown as Record<string, unknown>))
const showKey = (ctx: Context, k: ApiKey) =>
  ctx.out.print(k, () => record(k as unknown as Record<string, unknown>))

export function projectCommands(program: Command): void {
  const projects = program.command('projects').description('Projects (admin key)')
  projects
    .command('list')
    .description('List projects')
    .action(
      action(async (ctx) => {
        const r = await ctx.admin().projects.list()
        ctx.out.print(r, () => table(r.data, projectColumns))
      }),
    )
  projects
    .command('create <slug>')
    .description('Create a project')
    .requiredOption('--name <name>', 'display name')
    .option('--daily-limit <n>', 'most live emails per UTC day (0 = none)', intOption('--daily-limit'))
    .option('--no-rpc', 'refuse RPC calls for this project')
    .option('--default-from <address>', 'sender used when a send has no from')
    .action(
      action(
        async (
          ctx,
          slug: string,
          o: { name: string; dailyLimit?: number; rpc: boolean; defaultFrom?: string },
        ) => {
          const p = await ctx.admin().projects.create({
            slug,
            name: o.name,
            ...(o.dailyLimit !== undefined ? { dailyLimit: o.dailyLimit } : {}),
            ...(o.rpc === false ? { rpcEnabled: false } : {}),
            ...(o.defaultFrom ? { defaultFrom: o.defaultFrom } : {}),
          })
          showProject(ctx, p)
        },
      ),
    )
  projects
    .command('get <slug>')
    .description('Show a project')
    .action(action(async (ctx, slug: string) => showProject(ctx, await ctx.admin().projects.get(slug))))
  projects
    .command('update <slug>')
    .description('Change a project')
    .option('--name <name>')
    .option('--daily-limit <n>', 'most live emails per UTC day (0 = none)', intOption('--daily-limit'))
    .addOption(new Option('--rpc <on|off>', 'allow RPC calls').choices(['on', 'off']))
    .option('--default-from <address>')
    .option('--enable', 'enable a disabled project')
    .action(
      action(
        async (
          ctx,
          slug: string,
          o: { name?: string; dailyLimit?: number; rpc?: string; defaultFrom?: string; enable?: boolean },
        ) => {
          const p = await ctx.admin().projects.update(slug, {
            ...(o.name !== undefined ? { name: o.name } : {}),
            ...(o.dailyLimit !== undefined ? { dailyLimit: o.dailyLimit } : {}),
            ...(o.rpc !== undefined ? { rpcEnabled: o.rpc === 'on' } : {}),
            ...(o.defaultFrom !== undefined ? { defaultFrom: o.defaultFrom } : {}),
            ...(o.enable ? { disabled: false } : {}),
          })
          showProject(ctx, p)
        },
      ),
    )
  projects
    .command('disable <slug>')
    .description('Disable a project: its keys get 403 project_disabled')
    .action(action(async (ctx, slug: string) => showProject(ctx, await ctx.admin().projects.disable(slug))))

  const keys = program.command('keys').description('API keys (admin key)')
  keys
    .command('list <project>')
    .description("List a project's keys (never the full keys)")
    .action(
      action(async (ctx, slug: string) => {
        const r = await ctx.admin().apiKeys.list(slug)
        ctx.out.print(r, () => table(r.data, keyColumns))
      }),
    )
  keys
    .command('create <project>')
    .description('Create a key; the full key is printed once and cannot be shown again')
    .requiredOption('--name <name>', 'what the key is for')
    .addOption(
      new Option('--mode <mode>', 'live sends email, test only records it')
        .choices(['live', 'test'])
        .default('live'),
    )
    .option('--expires-at <iso>', 'ISO 8601 date-time with offset, in the future')
    .action(
      action(async (ctx, slug: string, o: { name: string; mode: 'live' | 'test'; expiresAt?: string }) => {
        const k = await ctx.admin().apiKeys.create(slug, {
          name: o.name,
          mode: o.mode,
          ...(o.expiresAt ? { expiresAt: o.expiresAt } : {}),
        })
        ctx.out.print(
          k,
          () =>
            `${record(k as unknown as Record<string, unknown>)}\n\nStore the key now: it is not shown again.`,
        )
      }),
    )
  keys
    .command('rename <keyId> <name>')
    .description('Rename a key')
    .action(
      action(async (ctx, id: string, name: string) =>
        showKey(ctx, await ctx.admin().apiKeys.rename(id, name)),
      ),
    )
  keys
    .command('revoke <keyId>')
    .description('Revoke a key at once (cannot be undone)')
    .action(action(async (ctx, id: string) => showKey(ctx, await ctx.admin().apiKeys.revoke(id))))
}
