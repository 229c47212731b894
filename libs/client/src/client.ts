import { Emails } from './resources/emails.js'
import { Audiences, Broadcasts, Contacts, Templates } from './resources/marketing.js'
import { AnalyticsResource, Domains, Events, Webhooks } from './resources/project.js'
import { Scope } from './scope.js'
import { HttpTransport, type RequestOptions, type TransportOptions } from './transport.js'
import type { ApiKey, Me } from './types/admin.js'
import type { DataList } from './types/common.js'

export interface ClientOptions extends Omit<TransportOptions, 'baseUrl' | 'token'> {
  /** A project key (`fs_live_…` or `fs_test_…`); defaults to `MAILER_API_KEY`. */
  apiKey?: string
  /** The deployment's base URL; defaults to `MAILER_URL`, then `http://localhost:3000`. */
  baseUrl?: string
}

/** Reads an environment variable where there is one (Node, Bun, Deno with --allow-env). */
export function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
  const v = proc?.env?.[name]
  return v === '' ? undefined : v
}

/**
 * The resources of one project: reached with a project key (`MailerClient`), or with the admin
 * key through the admin mirror (`AdminClient.project(slug)`), with the same methods.
 */
export class ProjectResources {
  readonly emails: Emails
  readonly events: Events
  readonly webhooks: Webhooks
  readonly domains: Domains
  readonly analytics: AnalyticsResource
  readonly templates: Templates
  readonly contacts: Contacts
  readonly audiences: Audiences
  readonly broadcasts: Broadcasts

  constructor(protected readonly scope: Scope) {
    this.emails = new Emails(scope)
    this.events = new Events(scope)
    this.webhooks = new Webhooks(scope)
    this.domains = new Domains(scope)
    this.analytics = new AnalyticsResource(scope)
    this.templates = new Templates(scope)
    this.contacts = new Contacts(scope)
    this.audiences = new Audiences(scope)
    this.broadcasts = new Broadcasts(scope)
  }
}

/** The HTTP client for a project key. */
export class MailerClient extends ProjectResources {
  readonly apiKeys: { list(opts?: RequestOptions): Promise<DataList<ApiKey>> }

  constructor(options: ClientOptions = {}) {
    const { apiKey, baseUrl, ...rest } = options
    const token = apiKey ?? env('MAILER_API_KEY')
    if (!token) throw new TypeError('an API key is required: pass apiKey or set MAILER_API_KEY')
    const transport = new HttpTransport({
      ...rest,
      token,
      baseUrl: baseUrl ?? env('MAILER_URL') ?? 'http://localhost:3000',
    })
    super(new Scope(transport))
    this.apiKeys = { list: (opts) => this.scope.call('apiKeys.list', undefined, opts) }
  }

  /** The calling key and its project. */
  me(opts?: RequestOptions): Promise<Me> {
    return this.scope.call('me', undefined, opts)
  }
}
