import { z } from 'zod'

/**
 * Core NATS broadcast on `dashboard.signout`, from the gateway replica that signed a dashboard
 * session out to every other one: revoke session `sid` until it would have expired (`expiresAt`,
 * Unix seconds). The sign-out is stored in PostgreSQL first; this only spares the others a read.
 */
export const SignoutMessage = z.object({ sid: z.string(), expiresAt: z.number().int() })
export type SignoutMessage = z.infer<typeof SignoutMessage>
