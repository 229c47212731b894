import type { ApiKeyRecord, ProjectRecord, ProjectRef } from '@mailer/contracts'
import type { ApiKey, Project } from '@mailer/db'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)

export function toProjectRecord(p: Project): ProjectRecord {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    dailyLimit: p.dailyLimit,
    rpcEnabled: p.rpcEnabled,
    disabled: p.disabled,
    defaultFrom: p.defaultFrom,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  }
}

export function toProjectRef(p: Project): ProjectRef {
  return {
    id: p.id,
    slug: p.slug,
    name: p.name,
    dailyLimit: p.dailyLimit,
    rpcEnabled: p.rpcEnabled,
    defaultFrom: p.defaultFrom,
  }
}

export function toKeyRecord(k: ApiKey): ApiKeyRecord {
  return {
    id: k.id,
    name: k.name,
    mode: k.mode as 'live' | 'test',
    prefix: k.prefix,
    expiresAt: iso(k.expiresAt),
    lastUsedAt: iso(k.lastUsedAt),
    revokedAt: iso(k.revokedAt),
    createdAt: k.createdAt.toISOString(),
  }
}
