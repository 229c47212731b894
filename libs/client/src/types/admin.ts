import type { PageQuery } from './common.js'

export interface Project {
  id: string
  slug: string
  name: string
  /** Most live emails per UTC day; 0 means no limit. */
  dailyLimit: number
  rpcEnabled: boolean
  disabled: boolean
  defaultFrom: string | null
  createdAt: string
  updatedAt: string
}

export interface CreateProjectInput {
  /** `^[a-z0-9][a-z0-9-]{0,62}$` */
  slug: string
  name: string
  dailyLimit?: number
  rpcEnabled?: boolean
  defaultFrom?: string | null
}

export interface UpdateProjectInput {
  name?: string
  dailyLimit?: number
  rpcEnabled?: boolean
  defaultFrom?: string | null
  disabled?: boolean
}

export type KeyMode = 'live' | 'test'

/** A key record; never the full key. */
export interface ApiKey {
  id: string
  name: string
  mode: KeyMode
  /** The first 12 characters of the key. */
  prefix: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
  createdAt: string
}

/** Returned only by `apiKeys.create`: the one time the full key is shown. */
export interface CreatedApiKey extends ApiKey {
  key: string
}

export interface CreateApiKeyInput {
  name: string
  mode: KeyMode
  /** ISO 8601 with offset, in the future. */
  expiresAt?: string | null
}

export interface Me {
  project: { id: string; slug: string; name: string; dailyLimit: number }
  key: { id: string; name: string; mode: KeyMode; prefix: string; expiresAt: string | null }
}

export type SuppressionReason = 'manual' | 'hard_bounce' | 'complaint'

export interface Suppression {
  address: string
  reason: SuppressionReason
  sourceEmailId: string | null
  createdAt: string
}

export interface AddSuppressionInput {
  address: string
  reason?: SuppressionReason
}

export interface RemovedSuppression {
  address: string
  deleted: boolean
}

export interface SuppressionsQuery extends PageQuery {
  /** Address contains. */
  q?: string
}

/** `admin.stats()`: counts by email status, per project. */
export interface ProjectStats {
  projectId: string
  slug: string
  name: string
  today: Record<string, number>
  last7d: Record<string, number>
  last30d: Record<string, number>
}

/** `admin.dev.createEvent` (only with `DEV_ROUTES=true`): fakes a delivery event. */
export interface DevEventInput {
  emailId: string
  type:
    | 'email.sent'
    | 'email.delivered'
    | 'email.deferred'
    | 'email.bounced'
    | 'email.complained'
    | 'email.rejected'
    | 'email.failed'
  /**
   * One of the email's recipients, whose status the fake moves; the first `to` address when left
   * out. It is the event's `data.recipient`, except for `email.sent` and `email.failed`, which
   * concern the whole email (`null`, as real ones).
   */
  recipient?: string
}

export type DomainVerification = 'pending' | 'verified' | 'failed'

export interface DnsRecord {
  type: 'TXT'
  name: string
  value: string
  status: DomainVerification
}

export interface Domain {
  domain: string
  verification: DomainVerification
  /** DKIM, SPF and DMARC TXT records to publish, each with the result of its last check. */
  records: DnsRecord[]
  checkedAt: string | null
  createdAt: string
}

export interface AdminDomain extends Domain {
  projectId: string
  slug: string | null
}
