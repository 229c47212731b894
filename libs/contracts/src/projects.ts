import { z } from 'zod'
import { mailboxString } from './emails.js'
import { displayName } from './names.js'
import { isoWithOffset } from './pagination.js'

export const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/

/** The column is a PostgreSQL integer: a larger limit failed the write as a 500. */
const dailyLimit = z.number().int().min(0).max(2_147_483_647)

/**
 * The sender of sends that leave out `from`, held to `from`'s own rule: anything else was taken
 * here and then failed every such send with an `invalid_body` on a `from` the caller never sent.
 * Its domain is checked at send time (a project gets its domains after it is created).
 */
const defaultFrom = mailboxString('defaultFrom must be "Name <a@b.c>" or a@b.c')

export const CreateProjectBody = z.strictObject({
  slug: z.string().regex(SLUG_RE, 'slug must match ^[a-z0-9][a-z0-9-]{0,62}$'),
  name: displayName(),
  dailyLimit: dailyLimit.optional(),
  rpcEnabled: z.boolean().optional(),
  defaultFrom: defaultFrom.nullable().optional(),
})
export type CreateProjectBody = z.infer<typeof CreateProjectBody>

export const UpdateProjectBody = z.strictObject({
  name: displayName().optional(),
  dailyLimit: dailyLimit.optional(),
  rpcEnabled: z.boolean().optional(),
  defaultFrom: defaultFrom.nullable().optional(),
  disabled: z.boolean().optional(),
})
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>

export const ProjectRecord = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  dailyLimit: z.number().int(),
  rpcEnabled: z.boolean(),
  disabled: z.boolean(),
  defaultFrom: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type ProjectRecord = z.infer<typeof ProjectRecord>

export const KEY_RE = /^fs_(live|test)_[A-Za-z0-9]{32}$/
export const KEY_PREFIX_LENGTH = 12

export const CreateApiKeyBody = z.strictObject({
  name: displayName(),
  mode: z.enum(['live', 'test']),
  expiresAt: isoWithOffset
    .refine((s) => new Date(s).getTime() > Date.now(), 'expiresAt must be in the future')
    .nullable()
    .optional(),
})
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>

export const RenameApiKeyBody = z.strictObject({ name: displayName() })

export const ApiKeyRecord = z.object({
  id: z.string(),
  name: z.string(),
  mode: z.enum(['live', 'test']),
  prefix: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  createdAt: z.string(),
})
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>

export const CreatedApiKey = ApiKeyRecord.extend({ key: z.string() })

export const MeResponse = z.object({
  project: z.object({ id: z.string(), slug: z.string(), name: z.string(), dailyLimit: z.number().int() }),
  key: z.object({
    id: z.string(),
    name: z.string(),
    mode: z.enum(['live', 'test']),
    prefix: z.string(),
    expiresAt: z.string().nullable(),
  }),
})

/**
 * `GET /v1/admin/api-keys?project=<slug>`. The messages are the other admin lists' (`project must
 * be a project slug`): zod's quoted its regular expression, and said `expected string, received
 * undefined` when the parameter was left out.
 */
export const AdminApiKeysQuery = z.object({
  project: z
    .string({ error: 'project is required: the slug of the project whose keys to list' })
    .regex(SLUG_RE, 'project must be a project slug'),
})
