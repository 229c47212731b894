import { z } from 'zod'
import { ProjectRef } from './caller.js'

/** gateway → auth: the SHA-256 (hex) of a presented key; the key itself never crosses the bus. */
export const VerifyKeyRequest = z.object({ keyHash: z.string().length(64), requestId: z.string().optional() })
export const VerifyKeyResponse = z.object({
  project: ProjectRef,
  key: z.object({
    id: z.string(),
    name: z.string(),
    mode: z.enum(['live', 'test']),
    prefix: z.string(),
    expiresAt: z.string().nullable(),
  }),
})
export type VerifyKeyResponse = z.infer<typeof VerifyKeyResponse>

/** any service → auth: a project by slug (admin mirror, RPC). Disabled projects included. */
export const ResolveProjectRequest = z.object({ slug: z.string() })
export const ResolveProjectResponse = ProjectRef.extend({ disabled: z.boolean() })
export type ResolveProjectResponse = z.infer<typeof ResolveProjectResponse>

/** Broadcast by auth after any change to a key or project, so every cache drops it at once. */
export const AuthInvalidation = z.object({
  keyHashes: z.array(z.string()).default([]),
  projectIds: z.array(z.string()).default([]),
  slugs: z.array(z.string()).default([]),
})
export type AuthInvalidation = z.infer<typeof AuthInvalidation>
