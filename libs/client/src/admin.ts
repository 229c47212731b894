import { type ClientOptions, env, ProjectResources } from './client.js'
import { pathSegment } from './endpoints.js'
import { Domains } from './resources/project.js'
import { paginate, Scope } from './scope.js'
import { HttpTransport, type RequestOptions } from './transport.js'
import type {
  AddSuppressionInput,
  AdminDomain,
  ApiKey,
  CreateApiKeyInput,
  CreatedApiKey,
  CreateProjectInput,
  DevEventInput,
  Domain,
  Project,
  ProjectStats,
  RemovedSuppression,
  Suppression,
  SuppressionsQuery,
  UpdateProjectInput,
} from './types/admin.js'
import type { DataList, Page } from './types/common.js'
import type {
  AdminEmail,
  AdminEmailSummary,
  AdminListEmailsQuery,
  EmailContent,
  SendResult,
} from './types/emails.js'
import type {
  AdminAnalyticsQuery,
  AdminEventsQuery,
  AdminMailerEvent,
  Analytics,
  MailerEvent,
} from './types/webhooks.js'

export interface AdminClientOptions extends Omit<ClientOptions, 'apiKey'> {
  /** The deployment's `ADMIN_API_KEY`; defaults to `MAILER_ADMIN_KEY`. */
  adminKey?: string
}

const slugParam = (slug: string) => ({ slug })

/** One project through the admin mirror: every project resource, plus domain setup. */
export class AdminProjectClient extends ProjectResources {
  // `declare`: a redeclared class field would be reset to undefined after super().
  declare readonly domains: ProjectResources['domains'] & {
    /** Creates the domain for the project (or returns it) with the DNS records to publish. */
    setup(domain: string, opts?: RequestOptions): Promise<Domain>
  }

  constructor(
    scope: Scope,
    readonly slug: string,
  ) {
    super(scope)
    const domains = new Domains(scope)
    this.domains = Object.assign(domains, {
      setup: (domain: string, opts?: RequestOptions): Promise<Domain> =>
        scope.call('admin.domains.setup', { slug, domain }, opts),
    })
  }
}

/** The HTTP client for the admin key (`/v1/admin/*`). */
export class AdminClient {
  private readonly s: Scope

  readonly projects = {
    create: (input: CreateProjectInput, opts?: RequestOptions): Promise<Project> =>
      this.s.call('admin.projects.create', undefined, { ...opts, body: input }),
    list: (opts?: RequestOptions): Promise<DataList<Project>> =>
      this.s.call('admin.projects.list', undefined, opts),
    get: (slug: string, opts?: RequestOptions): Promise<Project> =>
      this.s.call('admin.projects.get', slugParam(slug), opts),
    update: (slug: string, input: UpdateProjectInput, opts?: RequestOptions): Promise<Project> =>
      this.s.call('admin.projects.update', slugParam(slug), { ...opts, body: input }),
    /** Disables the project: its keys then fail with 403 `project_disabled`. */
    disable: (slug: string, opts?: RequestOptions): Promise<Project> =>
      this.s.call('admin.projects.disable', slugParam(slug), opts),
  }

  readonly apiKeys = {
    /** The answer's `key` is the full key, shown only here. */
    create: (slug: string, input: CreateApiKeyInput, opts?: RequestOptions): Promise<CreatedApiKey> =>
      this.s.call('admin.apiKeys.create', slugParam(slug), { ...opts, body: input }),
    list: (slug: string, opts?: RequestOptions): Promise<DataList<ApiKey>> =>
      this.s.call('admin.apiKeys.list', undefined, { ...opts, query: { project: slug } }),
    rename: (keyId: string, name: string, opts?: RequestOptions): Promise<ApiKey> =>
      this.s.call('admin.apiKeys.rename', { id: keyId }, { ...opts, body: { name } }),
    /** Effective on the key's next request (401 `revoked_api_key`); cannot be undone. */
    revoke: (keyId: string, opts?: RequestOptions): Promise<ApiKey> =>
      this.s.call('admin.apiKeys.revoke', { id: keyId }, opts),
  }

  readonly domains = {
    /** Every domain of every project. */
    list: (opts?: RequestOptions): Promise<DataList<AdminDomain>> =>
      this.s.call('admin.domains.list', undefined, opts),
    setup: (slug: string, domain: string, opts?: RequestOptions): Promise<Domain> =>
      this.s.call('admin.domains.setup', { slug, domain }, opts),
  }

  readonly suppressions = {
    list: (query: SuppressionsQuery = {}, opts?: RequestOptions): Promise<Page<Suppression>> =>
      this.s.call('admin.suppressions.list', undefined, { ...opts, query: { ...query } }),
    iterate: (query: SuppressionsQuery = {}, opts?: RequestOptions): AsyncGenerator<Suppression> =>
      paginate((q, o) => this.suppressions.list(q, o), query, opts),
    add: (input: AddSuppressionInput, opts?: RequestOptions): Promise<Suppression> =>
      this.s.call('admin.suppressions.add', undefined, { ...opts, body: input }),
    remove: (address: string, opts?: RequestOptions): Promise<RemovedSuppression> =>
      this.s.call('admin.suppressions.remove', { address }, opts),
  }

  readonly emails = {
    list: (query: AdminListEmailsQuery = {}, opts?: RequestOptions): Promise<Page<AdminEmailSummary>> =>
      this.s.call('admin.emails.list', undefined, { ...opts, query: { ...query } }),
    iterate: (query: AdminListEmailsQuery = {}, opts?: RequestOptions): AsyncGenerator<AdminEmailSummary> =>
      paginate((q, o) => this.emails.list(q, o), query, opts),
    get: (emailId: string, opts?: RequestOptions): Promise<AdminEmail> =>
      this.s.call('admin.emails.get', { id: emailId }, opts),
    content: (emailId: string, opts?: RequestOptions): Promise<EmailContent> =>
      this.s.call('admin.emails.content', { id: emailId }, opts),
    /** A new email from the stored content, tagged `resent_from`. */
    resend: (emailId: string, opts?: RequestOptions): Promise<SendResult> =>
      this.s.call('admin.emails.resend', { id: emailId }, opts),
  }

  readonly events = {
    list: (query: AdminEventsQuery = {}, opts?: RequestOptions): Promise<Page<AdminMailerEvent>> =>
      this.s.call('admin.events.list', undefined, { ...opts, query: { ...query } }),
    iterate: (query: AdminEventsQuery = {}, opts?: RequestOptions): AsyncGenerator<AdminMailerEvent> =>
      paginate((q, o) => this.events.list(q, o), query, opts),
  }

  readonly analytics = {
    get: (query: AdminAnalyticsQuery = {}, opts?: RequestOptions): Promise<Analytics> =>
      this.s.call('admin.analytics.get', undefined, { ...opts, query: { ...query } }),
  }

  readonly dev = {
    /** Fakes an event for an email (only when the deployment sets `DEV_ROUTES=true`). */
    createEvent: (input: DevEventInput, opts?: RequestOptions): Promise<MailerEvent> =>
      this.s.call('admin.dev.createEvent', undefined, { ...opts, body: input }),
  }

  constructor(options: AdminClientOptions = {}) {
    const { adminKey, baseUrl, ...rest } = options
    const token = adminKey ?? env('MAILER_ADMIN_KEY')
    if (!token) throw new TypeError('the admin key is required: pass adminKey or set MAILER_ADMIN_KEY')
    this.s = new Scope(
      new HttpTransport({ ...rest, token, baseUrl: baseUrl ?? env('MAILER_URL') ?? 'http://localhost:3000' }),
    )
  }

  /** Counts by email status per project, for today and the last 7 and 30 days. */
  stats(opts?: RequestOptions): Promise<DataList<ProjectStats>> {
    return this.s.call('admin.stats', undefined, opts)
  }

  /** The project's resources on the admin mirror: live, without an API key, limits apply. */
  project(slug: string): AdminProjectClient {
    if (!slug) throw new TypeError('a project slug is required')
    pathSegment('slug', slug)
    return new AdminProjectClient(new Scope(this.s.transport, slug), slug)
  }
}
