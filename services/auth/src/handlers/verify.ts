import type { Bus } from '@mailer/bus'
import {
  MailerError,
  noSuch,
  ResolveProjectRequest,
  SLUG_RE,
  SUBJECTS,
  VerifyKeyRequest,
  type VerifyKeyResponse,
} from '@mailer/contracts'
import { keyStateError } from '../domain/api-key.js'
import type { KeyStore } from '../infra/key-store.js'
import type { LastUsedTracker } from '../infra/last-used.js'

/** The hot path: key hash → project and key, from memory after the first request. */
export function serveVerify(bus: Bus, store: KeyStore, lastUsed: LastUsedTracker, queue: string): void {
  bus.serve(
    SUBJECTS.authVerify,
    VerifyKeyRequest,
    async ({ keyHash }): Promise<VerifyKeyResponse> => {
      const key = await store.byHash(keyHash)
      if (!key) throw new MailerError('invalid_api_key', 'Invalid API key')
      lastUsed.seen(key.keyId, key.lastUsedAt)
      const err = keyStateError(key, new Date())
      if (err) throw err
      lastUsed.touch(key.keyId)
      return key.response
    },
    { queue },
  )

  bus.serve(
    SUBJECTS.authResolveProject,
    ResolveProjectRequest,
    async ({ slug }) => {
      const project = await store.projectBySlug(slug)
      if (!project)
        throw new MailerError('project_not_found', noSuch('project', 'slug', slug, SLUG_RE), {
          param: 'slug',
        })
      return project
    },
    { queue },
  )
}
