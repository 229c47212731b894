import { paginate, type Scope } from '../scope.js'
import type { Query, RequestOptions } from '../transport.js'
import type { Page, PageQuery } from '../types/common.js'
import type {
  Audience,
  Broadcast,
  BroadcastInput,
  BroadcastSummary,
  BroadcastsQuery,
  Contact,
  ContactInput,
  ContactsQuery,
  ContactUpdate,
  CreateContactInput,
  Deleted,
  RenderedTemplate,
  Template,
  TemplateInput,
  TemplateSummary,
  TemplateUpdate,
  TemplateVersion,
} from '../types/marketing.js'

const q = (query: object): Query => ({ ...query }) as Query

export class Templates {
  constructor(private readonly s: Scope) {}
  list(query: PageQuery & { q?: string } = {}, opts?: RequestOptions): Promise<Page<TemplateSummary>> {
    return this.s.call('templates.list', undefined, { ...opts, query: q(query) })
  }
  create(input: TemplateInput, opts?: RequestOptions): Promise<Template> {
    return this.s.call('templates.create', undefined, { ...opts, body: input })
  }
  get(name: string, opts?: RequestOptions): Promise<Template> {
    return this.s.call('templates.get', { name }, opts)
  }
  /** Every update is a new version. */
  update(name: string, input: TemplateUpdate, opts?: RequestOptions): Promise<Template> {
    return this.s.call('templates.update', { name }, { ...opts, body: input })
  }
  delete(name: string, opts?: RequestOptions): Promise<Deleted & { name: string }> {
    return this.s.call('templates.delete', { name }, opts)
  }
  versions(name: string, query: PageQuery = {}, opts?: RequestOptions): Promise<Page<TemplateVersion>> {
    return this.s.call('templates.versions', { name }, { ...opts, query: q(query) })
  }
  /** Makes an old version current again (as a new version). */
  restore(name: string, version: number, opts?: RequestOptions): Promise<Template> {
    return this.s.call('templates.restore', { name }, { ...opts, body: { version } })
  }
  render(name: string, data: Record<string, unknown> = {}, opts?: RequestOptions): Promise<RenderedTemplate> {
    return this.s.call('templates.render', { name }, { ...opts, body: { data } })
  }
}

export class Contacts {
  constructor(private readonly s: Scope) {}
  list(query: ContactsQuery = {}, opts?: RequestOptions): Promise<Page<Contact>> {
    return this.s.call('contacts.list', undefined, { ...opts, query: q(query) })
  }
  iterate(query: ContactsQuery = {}, opts?: RequestOptions): AsyncGenerator<Contact> {
    return paginate((page, o) => this.list(page, o), query, opts)
  }
  /** Creates, or updates the contact with that email. */
  create(input: CreateContactInput, opts?: RequestOptions): Promise<Contact> {
    return this.s.call('contacts.create', undefined, { ...opts, body: input })
  }
  /** 1-5,000 contacts at once, optionally added to an audience. */
  import(
    contacts: ContactInput[],
    query: { audienceId?: string } = {},
    opts?: RequestOptions,
  ): Promise<{ created: number; updated: number }> {
    return this.s.call('contacts.import', undefined, { ...opts, body: contacts, query: q(query) })
  }
  get(contactId: string, opts?: RequestOptions): Promise<Contact> {
    return this.s.call('contacts.get', { id: contactId }, opts)
  }
  update(contactId: string, input: ContactUpdate, opts?: RequestOptions): Promise<Contact> {
    return this.s.call('contacts.update', { id: contactId }, { ...opts, body: input })
  }
  delete(contactId: string, opts?: RequestOptions): Promise<Deleted> {
    return this.s.call('contacts.delete', { id: contactId }, opts)
  }
}

export class Audiences {
  constructor(private readonly s: Scope) {}
  list(query: PageQuery = {}, opts?: RequestOptions): Promise<Page<Audience>> {
    return this.s.call('audiences.list', undefined, { ...opts, query: q(query) })
  }
  create(input: { name: string }, opts?: RequestOptions): Promise<Audience> {
    return this.s.call('audiences.create', undefined, { ...opts, body: input })
  }
  get(audienceId: string, opts?: RequestOptions): Promise<Audience> {
    return this.s.call('audiences.get', { id: audienceId }, opts)
  }
  update(audienceId: string, input: { name?: string }, opts?: RequestOptions): Promise<Audience> {
    return this.s.call('audiences.update', { id: audienceId }, { ...opts, body: input })
  }
  /** 409 `audience_in_use` while a broadcast uses it. */
  delete(audienceId: string, opts?: RequestOptions): Promise<Deleted> {
    return this.s.call('audiences.delete', { id: audienceId }, opts)
  }
  /** The audience's contacts, newest first; `q` searches their email and names. */
  listContacts(
    audienceId: string,
    query: Omit<ContactsQuery, 'audienceId'> = {},
    opts?: RequestOptions,
  ): Promise<Page<Contact>> {
    return this.s.call('audiences.listContacts', { id: audienceId }, { ...opts, query: q(query) })
  }
  addContacts(audienceId: string, contactIds: string[], opts?: RequestOptions): Promise<{ added: number }> {
    return this.s.call('audiences.addContacts', { id: audienceId }, { ...opts, body: { contactIds } })
  }
  removeContacts(
    audienceId: string,
    contactIds: string[],
    opts?: RequestOptions,
  ): Promise<{ removed: number }> {
    return this.s.call('audiences.removeContacts', { id: audienceId }, { ...opts, body: { contactIds } })
  }
}

export class Broadcasts {
  constructor(private readonly s: Scope) {}
  /** Items without `html` and `text`: `get` has them. */
  list(query: BroadcastsQuery = {}, opts?: RequestOptions): Promise<Page<BroadcastSummary>> {
    return this.s.call('broadcasts.list', undefined, { ...opts, query: q(query) })
  }
  /** Creates a draft. */
  create(input: BroadcastInput, opts?: RequestOptions): Promise<Broadcast> {
    return this.s.call('broadcasts.create', undefined, { ...opts, body: input })
  }
  get(broadcastId: string, opts?: RequestOptions): Promise<Broadcast> {
    return this.s.call('broadcasts.get', { id: broadcastId }, opts)
  }
  /** Drafts only (409 `broadcast_not_draft`). */
  update(broadcastId: string, input: Partial<BroadcastInput>, opts?: RequestOptions): Promise<Broadcast> {
    return this.s.call('broadcasts.update', { id: broadcastId }, { ...opts, body: input })
  }
  delete(broadcastId: string, opts?: RequestOptions): Promise<Deleted> {
    return this.s.call('broadcasts.delete', { id: broadcastId }, opts)
  }
  /** Sends now, or at `scheduledAt` (ISO 8601 with offset). */
  send(broadcastId: string, input: { scheduledAt?: string } = {}, opts?: RequestOptions): Promise<Broadcast> {
    return this.s.call('broadcasts.send', { id: broadcastId }, { ...opts, body: input })
  }
  cancel(broadcastId: string, opts?: RequestOptions): Promise<Broadcast> {
    return this.s.call('broadcasts.cancel', { id: broadcastId }, opts)
  }
}
