import { z } from 'zod'

/**
 * A resource's display name (project, API key, audience, broadcast): trimmed, then 1-200
 * characters, so `"  News "` is stored as `News` and a name of nothing but spaces is 400
 * `invalid_body` (param `name`) on every resource alike. Identifiers (template names, slugs) are
 * not display names: they keep their own patterns, which admit no space at all.
 */
export const displayName = () =>
  z.string().trim().min(1, 'name must have 1-200 characters').max(200, 'name must have 1-200 characters')
