import type { Bus } from '@mailer/bus'
import { type Caller, ProjectRecord, type RouteRequest } from '@mailer/contracts'
import { z } from 'zod'

const ProjectList = z.object({ data: z.array(ProjectRecord) })

/**
 * Every project, from the auth service that owns them: the admin list request the admin API
 * serves (`GET /v1/admin/projects`; projects are few, so one list beats a lookup per row).
 */
export async function listProjects(bus: Bus, caller: Caller): Promise<ProjectRecord[]> {
  const req: RouteRequest = { caller: { ...caller, project: null }, params: {}, query: {}, headers: {} }
  const res = await bus.request('api.auth.projects.list', req, { schema: ProjectList })
  return res.data
}
