import type { Bus } from '@mailer/bus'
import { serveRoutes } from '@mailer/bus'
import {
  CreateProjectBody,
  fail,
  newId,
  noSuch,
  parseBody,
  SLUG_RE,
  UpdateProjectBody,
} from '@mailer/contracts'
import { type Db, Prisma } from '@mailer/db'
import { toProjectRecord } from '../domain/records.js'
import type { Invalidate } from './invalidate.js'

async function findBySlug(db: Db, slug: string) {
  const p = await db.project.findUnique({ where: { slug } })
  if (!p) throw fail('project_not_found', noSuch('project', 'slug', slug, SLUG_RE), 'slug')
  return p
}

/** Admin project routes (contract.md part 2). */
export function serveProjects(bus: Bus, db: Db, invalidate: Invalidate, queue: string): void {
  serveRoutes(bus, queue, {
    'api.auth.projects.create': async ({ body }) => {
      const input = parseBody(CreateProjectBody, body)
      try {
        const p = await db.project.create({
          data: {
            id: newId('project'),
            slug: input.slug,
            name: input.name,
            ...(input.dailyLimit !== undefined ? { dailyLimit: input.dailyLimit } : {}),
            ...(input.rpcEnabled !== undefined ? { rpcEnabled: input.rpcEnabled } : {}),
            defaultFrom: input.defaultFrom ?? null,
          },
        })
        // A slug may have been cached as "not found" by no one, but drop it anyway.
        await invalidate({ slugs: [p.slug] })
        return toProjectRecord(p)
      } catch (e) {
        if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
          throw fail('slug_taken', `A project with slug '${input.slug}' already exists`, 'slug')
        }
        throw e
      }
    },

    'api.auth.projects.list': async () => {
      const rows = await db.project.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] })
      return { data: rows.map(toProjectRecord) }
    },

    'api.auth.projects.get': async ({ params }) => toProjectRecord(await findBySlug(db, params.slug ?? '')),

    'api.auth.projects.update': async ({ params, body }) => {
      const input = parseBody(UpdateProjectBody, body)
      const current = await findBySlug(db, params.slug ?? '')
      const p = await db.project.update({ where: { id: current.id }, data: input })
      await invalidate({ projectIds: [p.id], slugs: [p.slug] })
      return toProjectRecord(p)
    },

    'api.auth.projects.disable': async ({ params }) => {
      const current = await findBySlug(db, params.slug ?? '')
      const p = await db.project.update({ where: { id: current.id }, data: { disabled: true } })
      await invalidate({ projectIds: [p.id], slugs: [p.slug] })
      return toProjectRecord(p)
    },
  })
}
