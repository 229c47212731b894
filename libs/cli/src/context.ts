import { AdminClient, MailerClient, type ProjectResources } from '@mailer/client'
import { type Command, InvalidArgumentError } from 'commander'
import { UsageError } from './exit.js'
import { Out } from './output.js'

export interface GlobalOptions {
  url?: string
  adminKey?: string
  apiKey?: string
  json?: boolean
}

/** What every command needs: output and clients, from global options or the environment. */
export class Context {
  readonly out: Out
  readonly url: string
  private readonly opts: GlobalOptions

  constructor(private readonly cmd: Command) {
    this.opts = cmd.optsWithGlobals<GlobalOptions>()
    this.out = new Out(Boolean(this.opts.json))
    this.url = this.opts.url
      ? checkUrl(this.opts.url, '--url')
      : process.env.MAILER_URL
        ? checkUrl(process.env.MAILER_URL, 'MAILER_URL')
        : 'http://localhost:3000'
  }

  /** Whether the user gave the option (`false` when it only holds its default). */
  given(option: string): boolean {
    const source = this.cmd.getOptionValueSource(option)
    return source !== undefined && source !== 'default'
  }

  get adminKey(): string | undefined {
    return this.opts.adminKey ?? (process.env.MAILER_ADMIN_KEY || undefined)
  }

  get apiKey(): string | undefined {
    return this.opts.apiKey ?? (process.env.MAILER_API_KEY || undefined)
  }

  admin(): AdminClient {
    const adminKey = this.adminKey
    if (!adminKey)
      throw new UsageError('this command needs the admin key: set MAILER_ADMIN_KEY or pass --admin-key')
    return new AdminClient({ adminKey, baseUrl: this.url })
  }

  project(): MailerClient {
    const apiKey = this.apiKey
    if (!apiKey)
      throw new UsageError('this command needs a project key: set MAILER_API_KEY or pass --api-key')
    return new MailerClient({ apiKey, baseUrl: this.url })
  }

  /** No project named and no project key, but the admin key: a list across every project. */
  acrossProjects(slug: string | undefined): boolean {
    return !slug && !this.apiKey && Boolean(this.adminKey)
  }

  /** `--project <slug>` acts through the admin mirror with the admin key; otherwise the project key. */
  scope(slug: string | undefined): ProjectResources {
    return slug ? this.admin().project(slug) : this.project()
  }
}

/**
 * The deployment's base URL, checked before any request: `localhost:3000` (as in a curl
 * example) would otherwise parse as a URL of scheme `localhost:` and fail as an unreachable
 * host. No part of it is echoed: a user name or password cannot be sent (the API takes keys, not
 * URL credentials), and anything else may be a key typed in the wrong place.
 */
function checkUrl(value: string, from: string): string {
  const example = 'an http:// or https:// URL such as http://localhost:3000'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new UsageError(`${from} must be ${example}`)
  }
  if (url.username || url.password)
    throw new UsageError(
      `${from} must not hold a user name or password: pass keys with --admin-key or --api-key`,
    )
  // Its scheme is not quoted either: `adm-SECRETKEY:zz` (a key typed where the URL goes) parses
  // as a URL whose scheme is the key (docs/api.md: a usage error never quotes what was typed).
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${from} must be ${example} (the scheme given is not shown)`)
  return value
}

/** Wraps an action so that it gets a Context built from its own command. */
export function action<A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<void>) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command
    await fn(new Context(cmd), ...(args.slice(0, -1) as A))
  }
}

export function intOption(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a whole number`)
    return Number(v)
  }
}

/**
 * At least 1: `tail --interval 0` would poll the gateway without pause, `--count 0` never end.
 * `max` bounds it where more would break (Node fires a timer over 2^31 - 1 ms after 1 ms).
 */
export function countOption(name: string, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max)
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `${name} must be a whole number of at least 1`
          : `${name} must be a whole number from 1 to ${max}`,
      )
    return Number(v)
  }
}
