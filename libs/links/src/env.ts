import { z } from 'zod'
import { Links } from './links.js'

// Only for development and tests: a deployment without TRACKING_SECRET refuses to start in
// production (linksFromEnv), because anyone knowing this value could forge links.
const DEV_SECRET = 'mailer-dev-tracking-secret-not-for-production'

/** Env fields of every service that builds or reads public links (contract.md part 1). */
export const linksEnvFields = {
  /** Base of tracking and unsubscribe links: where the gateway is reachable from the internet. */
  PUBLIC_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL')
    .default('http://localhost:3000'),
  /** HMAC key of link tokens; rotating it breaks the links in emails already sent. */
  TRACKING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
}

/**
 * The schema-level check of those fields (each service's `superRefine`): production needs its own
 * TRACKING_SECRET, so the process stops with the other configuration errors (exit 78, naming it)
 * instead of crashing later while it wires itself up.
 */
export function checkLinksEnv(
  env: { NODE_ENV: string; TRACKING_SECRET?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (!env.TRACKING_SECRET && env.NODE_ENV === 'production')
    ctx.addIssue({
      code: 'custom',
      path: ['TRACKING_SECRET'],
      message: 'is required when NODE_ENV=production (at least 16 characters)',
    })
}

export interface LinksEnv {
  NODE_ENV: string
  PUBLIC_URL: string
  TRACKING_SECRET?: string | undefined
}

/** The Links of a service's env; throws naming TRACKING_SECRET when production has none. */
export function linksFromEnv(env: LinksEnv): Links {
  if (!env.TRACKING_SECRET && env.NODE_ENV === 'production') {
    throw new Error('TRACKING_SECRET is required in production (at least 16 characters)')
  }
  return new Links({ publicUrl: env.PUBLIC_URL, secret: env.TRACKING_SECRET ?? DEV_SECRET })
}
