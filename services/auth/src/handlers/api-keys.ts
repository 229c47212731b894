import type { Bus } from '@mailer/bus'
import { serveRoutes } from '@mailer/bus'
import {
  AdminApiKeysQuery,
  CreateApiKeyBody,
  fail,
  newId,
  noSuch,
  parseBody,
  parseQuery,
  RenameApiKeyBody,
  requireProject,
  SLUG_RE,
} from '@mailer/contracts'
import type { Db } from '@mailer/db'
import { generateKey } from '../domain/api-key.js'
import { toKeyRecord } from '../domain/records.js'
import type { Invalidate } from './invalidate.js'

/** API key routes: admin create/list/rename/revoke, the project's own list, and /v1/me. */
export function serveApiKeys(bus: Bus, db: Db, invalidate: Invalidate, queue: string): void {
  const keyById = async (id: string) => {
    const k = await db.apiKey.findUnique({ where: { id } })
    if (!k) throw fail('api_key_not_found', noSuch('API key', 'id', id, 'apiKey'), 'id')
    return k
  }

  serveRoutes(bus, queue, {
    'api.auth.keys.create': async ({ params, body }) => {
      const input = parseBody(CreateApiKeyBody, body)
      const project = await db.project.findUnique({ where: { slug: params.slug ?? '' } })
      if (!project) throw fail('project_not_found', noSuch('project', 'slug', params.slug, SLUG_RE), 'slug')
      const { key, prefix, hash } = generateKey(input.mode)
      const row = await db.apiKey.create({
        data: {
          id: newId('apiKey'),
          projectId: project.id,
          name: input.name,
          mode: input.mode,
          prefix,
          hash,
          expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
        },
      })
      // Drop a cached "unknown hash" in case someone tried this key before it existed.
      await invalidate({ keyHashes: [hash] })
      return { ...toKeyRecord(row), key }
    },

    'api.auth.keys.list': async ({ query }) => {
      const { project: slug } = parseQuery(AdminApiKeysQuery, query)
      const project = await db.project.findUnique({ where: { slug } })
      if (!project) throw fail('project_not_found', noSuch('project', 'slug', slug, SLUG_RE), 'project')
      const rows = await db.apiKey.findMany({
        where: { projectId: project.id },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      })
      return { data: rows.map(toKeyRecord) }
    },

    'api.auth.keys.list-own': async ({ caller }) => {
      const project = requireProject(caller)
      const rows = await db.apiKey.findMany({
        where: { projectId: project.id },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      })
      return { data: rows.map(toKeyRecord) }
    },

    'api.auth.keys.rename': async ({ params, body }) => {
      const { name } = parseBody(RenameApiKeyBody, body)
      const current = await keyById(params.id ?? '')
      const row = await db.apiKey.update({ where: { id: current.id }, data: { name } })
      await invalidate({ keyHashes: [row.hash] })
      return toKeyRecord(row)
    },

    'api.auth.keys.revoke': async ({ params }) => {
      const current = await keyById(params.id ?? '')
      // Revocation cannot be undone; revoking twice keeps the first time, also when two revokes
      // race (a double click): only the one that finds it unrevoked writes, both answer the row.
      if (!current.revokedAt)
        await db.apiKey.updateMany({
          where: { id: current.id, revokedAt: null },
          data: { revokedAt: new Date() },
        })
      const row = current.revokedAt ? current : await keyById(current.id)
      await invalidate({ keyHashes: [row.hash] })
      return toKeyRecord(row)
    },

    'api.auth.me': async ({ caller }) => {
      const project = requireProject(caller)
      if (!caller.apiKeyId) throw fail('route_not_found', 'GET /v1/me needs a project API key')
      const key = await keyById(caller.apiKeyId)
      return {
        project: { id: project.id, slug: project.slug, name: project.name, dailyLimit: project.dailyLimit },
        key: {
          id: key.id,
          name: key.name,
          mode: key.mode,
          prefix: key.prefix,
          expiresAt: key.expiresAt?.toISOString() ?? null,
        },
      }
    },
  })
}
