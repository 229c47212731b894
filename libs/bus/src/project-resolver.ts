import {
  AuthInvalidation,
  isMailerError,
  MailerError,
  noSuch,
  type ProjectRef,
  ResolveProjectResponse,
  SLUG_RE,
  SUBJECTS,
} from '@mailer/contracts'
import type { Bus } from './bus.js'

type Resolved = ResolveProjectResponse | null

/** Default time a resolved (or unknown) slug is served from memory. */
export const PROJECT_CACHE_TTL_MS = 5_000

/**
 * Project slug → project, asked of the auth service (`auth.project.resolve`) and kept briefly in
 * memory so that RPC calls cost no round trip per request. Every `auth.invalidate` that names the
 * slug or project id drops it at once: auth publishes (and flushes) that before it answers the
 * change, so a call made after the change never sees the old project.
 */
export class ProjectResolver {
  private readonly cache = new Map<string, { value: Resolved; expiresAt: number }>()
  // Bumped by every invalidation: an answer that was in flight across one is not cached.
  private generation = 0

  constructor(
    private readonly bus: Bus,
    private readonly ttlMs = PROJECT_CACHE_TTL_MS,
    private readonly maxEntries = 10_000,
  ) {
    bus.subscribeInvalidations(SUBJECTS.authInvalidate, {
      onMessage: (payload) => this.invalidate(AuthInvalidation.parse(payload)),
      // Invalidations broadcast while the connection was down never arrived.
      onMissed: () => {
        this.generation++
        this.cache.clear()
      },
    })
  }

  /** The project (disabled ones included), or 404 `project_not_found` with `param`. */
  async resolve(slug: string, param = 'project'): Promise<ResolveProjectResponse> {
    const hit = this.cache.get(slug)
    let value: Resolved
    if (hit && hit.expiresAt > Date.now()) value = hit.value
    else value = await this.fetch(slug)
    if (!value)
      throw new MailerError('project_not_found', noSuch('project', 'slug', slug, SLUG_RE), { param })
    return value
  }

  invalidate(inv: AuthInvalidation): void {
    this.generation++
    const slugs = new Set(inv.slugs)
    const ids = new Set(inv.projectIds)
    for (const [slug, entry] of this.cache) {
      if (slugs.has(slug) || (entry.value && ids.has(entry.value.id))) this.cache.delete(slug)
    }
  }

  private async fetch(slug: string): Promise<Resolved> {
    const generation = this.generation
    let value: Resolved
    try {
      value = await this.bus.request(
        SUBJECTS.authResolveProject,
        { slug },
        { schema: ResolveProjectResponse },
      )
    } catch (e) {
      if (!(isMailerError(e) && e.code === 'project_not_found')) throw e
      value = null
    }
    if (generation === this.generation) {
      if (this.cache.size >= this.maxEntries) this.cache.clear()
      this.cache.set(slug, { value, expiresAt: Date.now() + this.ttlMs })
    }
    return value
  }
}

const resolvers = new WeakMap<Bus, ProjectResolver>()

/** The connection's one resolver (one cache and one invalidation subscription per process). */
export function projectResolver(bus: Bus): ProjectResolver {
  let r = resolvers.get(bus)
  if (!r) {
    r = new ProjectResolver(bus)
    resolvers.set(bus, r)
  }
  return r
}

/** The project as a Caller carries it (without the auth-side `disabled` flag). */
export function projectRef(p: ResolveProjectResponse): ProjectRef {
  const { disabled: _disabled, ...ref } = p
  return ref
}
