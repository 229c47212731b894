import type { PageQuery } from './common.js'

/** Templates, contacts, audiences and broadcasts (contract.md part 5). */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

export interface TemplateVariable {
  /** An identifier or a dotted path (`user.first_name`). */
  name: string
  required?: boolean
  /** Sample value used by render previews. */
  example?: JsonValue
}

export interface Template {
  id: string
  /** `^[a-z0-9][a-z0-9_-]{0,99}$`, the key templates are addressed by. */
  name: string
  subject: string | null
  html: string | null
  text: string | null
  variables: { name: string; required: boolean; example: JsonValue }[]
  version: number
  createdAt: string
  updatedAt: string
}

/** A list item: the template without its html and text. */
export type TemplateSummary = Omit<Template, 'html' | 'text'>

export interface TemplateVersion {
  version: number
  subject: string | null
  html: string | null
  text: string | null
  variables: Template['variables']
  createdAt: string
}

export interface TemplateInput {
  name: string
  subject?: string
  html?: string
  text?: string
  variables?: TemplateVariable[]
}

export interface TemplateUpdate {
  subject?: string | null
  html?: string | null
  text?: string | null
  variables?: TemplateVariable[]
  /** The version the change was made from: 409 `template_conflict` if it has moved on. */
  version?: number
}

export interface RenderedTemplate {
  subject: string | null
  html: string | null
  text: string | null
}

export interface Contact {
  id: string
  email: string
  firstName: string | null
  lastName: string | null
  unsubscribed: boolean
  data: Record<string, unknown>
  createdAt: string
  updatedAt: string
}

export interface ContactInput {
  email: string
  firstName?: string | null
  lastName?: string | null
  /** Null or left out keeps the stored value on create and import. */
  unsubscribed?: boolean | null
  /** Null or left out keeps the stored data on create and import; null on update clears it. */
  data?: Record<string, unknown> | null
}

export interface CreateContactInput extends ContactInput {
  /** Audiences to add the contact to. */
  audienceIds?: string[]
}

export type ContactUpdate = Omit<ContactInput, 'email' | 'unsubscribed'> & { unsubscribed?: boolean }

export interface ContactsQuery extends PageQuery {
  q?: string
  audienceId?: string
}

export interface Audience {
  id: string
  name: string
  contactCount: number
  createdAt: string
  updatedAt: string
}

export type BroadcastStatus = 'draft' | 'scheduled' | 'sending' | 'paused' | 'sent' | 'canceled'

export interface Broadcast {
  id: string
  name: string | null
  audienceId: string
  from: string
  subject: string
  html: string
  text: string | null
  status: BroadcastStatus
  /** Email status → count of the broadcast's emails. */
  counts: Record<string, number>
  scheduledAt: string | null
  resumeAt: string | null
  startedAt: string | null
  completedAt: string | null
  createdAt: string
  updatedAt: string
}

/** A list item: the broadcast without its html and text (`get` has them). */
export type BroadcastSummary = Omit<Broadcast, 'html' | 'text'>

export interface BroadcastInput {
  audienceId: string
  from: string
  subject: string
  html: string
  text?: string | null
  name?: string | null
}

export interface BroadcastsQuery extends PageQuery {
  status?: BroadcastStatus
}

export interface Deleted {
  id: string
  deleted: true
}
