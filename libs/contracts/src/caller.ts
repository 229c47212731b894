import { z } from 'zod'

/** What a service needs to know about the project a call acts on. */
export const ProjectRef = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  dailyLimit: z.number().int(),
  rpcEnabled: z.boolean(),
  defaultFrom: z.string().nullable(),
})
export type ProjectRef = z.infer<typeof ProjectRef>

/**
 * Who is calling, established once by the gateway (or the RPC entry) and carried with every
 * bus request so that services never re-authenticate.
 * - `via: 'api'`: a project API key (`apiKeyId`, `mode` from the key).
 * - `via: 'admin'`: the admin key; on admin-mirror routes `project` is set and the call acts as a
 *   live caller without a key.
 * - `via: 'rpc'`: an in-cluster RPC call naming the project by slug (always live).
 * - `source: 'broadcast'`: set only by the broadcast service on the sends it makes for a
 *   broadcast; the email service records such emails with source `broadcast` and their
 *   broadcast and contact, and holds them to the broadcast share of the rate limit.
 */
export const Caller = z.object({
  requestId: z.string(),
  via: z.enum(['api', 'admin', 'rpc']),
  project: ProjectRef.nullable(),
  apiKeyId: z.string().nullable(),
  mode: z.enum(['live', 'test']),
  source: z.enum(['broadcast']).optional(),
})
export type Caller = z.infer<typeof Caller>

/** The message a gateway route sends to the service that owns it. */
export const RouteRequest = z.object({
  caller: Caller,
  params: z.record(z.string(), z.string()).default({}),
  query: z.record(z.string(), z.unknown()).default({}),
  body: z.unknown().optional(),
  /** Only the headers a route declared it needs (for example `idempotency-key`). */
  headers: z.record(z.string(), z.string()).default({}),
})
export type RouteRequest = z.infer<typeof RouteRequest>

/** The caller's project, or a clear internal error when a route that needs one has none. */
export function requireProject(caller: Caller): ProjectRef {
  if (!caller.project) throw new Error('route needs a project but the caller has none')
  return caller.project
}
