import {
  fail,
  type TemplateRecord,
  type TemplateSummaryRecord,
  TemplateVariable,
  type TemplateVersionRecord,
} from '@mailer/contracts'
import type { Template, TemplateVersion } from '@mailer/db'
import { z } from 'zod'

const StoredVariables = z.array(TemplateVariable)

/** Variables as stored (JSON written by this service); anything unreadable counts as none. */
export function storedVariables(json: unknown): TemplateVariable[] {
  const res = StoredVariables.safeParse(json)
  return res.success ? res.data : []
}

export function toTemplateSummary(t: Template): TemplateSummaryRecord {
  return {
    id: t.id,
    name: t.name,
    subject: t.subject,
    variables: storedVariables(t.variables),
    version: t.version,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  }
}

export function toTemplateRecord(t: Template): TemplateRecord {
  return { ...toTemplateSummary(t), html: t.html, text: t.text }
}

export function toVersionRecord(v: TemplateVersion): TemplateVersionRecord {
  return {
    version: v.version,
    subject: v.subject,
    html: v.html,
    text: v.text,
    variables: storedVariables(v.variables),
    createdAt: v.createdAt.toISOString(),
  }
}

/** The content of one version: what a PATCH or restore turns into the next version. */
export interface TemplateContent {
  subject: string | null
  html: string | null
  text: string | null
  variables: TemplateVariable[]
}

/** A PATCH applied to the current content: `undefined` keeps a part, `null` removes it. */
export function applyPatch(
  current: TemplateContent,
  patch: {
    subject?: string | null
    html?: string | null
    text?: string | null
    variables?: TemplateVariable[]
  },
): TemplateContent {
  return {
    subject: patch.subject === undefined ? current.subject : patch.subject,
    html: patch.html === undefined ? current.html : patch.html,
    text: patch.text === undefined ? current.text : patch.text,
    variables: patch.variables ?? current.variables,
  }
}

/** Versions are paged newest first by number; the cursor is opaque to clients. */
export function encodeVersionCursor(version: number): string {
  return Buffer.from(`v:${version}`).toString('base64url')
}

export function decodeVersionCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined
  const m = /^v:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m) throw fail('invalid_query', 'cursor is not a cursor this API returned', 'cursor')
  return Number(m[1])
}
