import { baseEnv, envInt, parseEnv } from '@mailer/config'
import type { z } from 'zod'

export const authEnv = baseEnv.extend({
  /** Upper bound on how long a verified key may be served from memory if an invalidation is lost. */
  AUTH_CACHE_TTL_SECONDS: envInt(60, 1, 3600),
})
export type AuthEnv = z.infer<typeof authEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): AuthEnv =>
  parseEnv(authEnv, source)
