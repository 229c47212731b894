import { type Runtime, serveRoutes } from '@mailer/bus'
import {
  type AdminDomainRecord,
  type Caller,
  DomainsQuery,
  fail,
  MAX_SENDING_DOMAIN_LENGTH,
  newId,
  normalizeDomainName,
  ProjectRecord,
  parseOptionalBody,
  parseQuery,
  ResolveProjectResponse,
  requireProject,
  SetupDomainBody,
  SUBJECTS,
} from '@mailer/contracts'
import { z } from 'zod'
import { dkimSelector, generateDkimKey } from '../domain/dkim.js'
import { buildRecords } from '../domain/dns-records.js'
import { DomainVerifier } from '../infra/dns-check.js'
import type { DnsSettings } from '../infra/dns-env.js'
import { type DomainRow, DomainStore, toDomainRecord } from '../infra/domain-store.js'

const QUEUE = 'email'

/**
 * Sending domains (interface.md "Admin routes", contract.md part 5): the admin setup route,
 * the project's list (with `?refresh=1` re-checking DNS) and the admin list of every domain.
 */
export function serveDomains(rt: Runtime, env: DnsSettings): void {
  const store = new DomainStore(rt.db)
  const verifier = new DomainVerifier(env, rt.metrics)
  const keygenSeconds = rt.metrics.histogram(
    'dkim_keygen_seconds',
    'Time to generate a 2048-bit DKIM key pair',
  )
  const verified = rt.metrics.counter(
    'domain_verification_changes_total',
    'Domains whose verification changed, by new state',
    ['state'],
  )

  // Accept-side replicas cache each project's sender domains; a flush before we answer means
  // a send made after this reply finds the cache already dropped.
  const invalidate = async (projectId: string) => {
    rt.bus.publish(SUBJECTS.domainsInvalidate, { projectId })
    await rt.bus.flush()
  }

  /** Re-checks a domain and stores the result; `changed` when its verification moved. */
  const recheck = async (row: DomainRow, caller: Caller): Promise<{ row: DomainRow; changed: boolean }> => {
    const result = await verifier.check(row, new Date())
    const same =
      result.verification === row.verification &&
      result.checkedAt?.getTime() === row.checkedAt?.getTime() &&
      JSON.stringify(result.records) === JSON.stringify(row.records)
    if (same) return { row, changed: false }
    const saved = await store.saveCheck(row.id, result)
    const changed = saved.verification !== row.verification
    if (changed) {
      verified.inc({ state: saved.verification })
      rt.logger.info(
        {
          requestId: caller.requestId,
          projectId: row.projectId,
          domain: row.name,
          from: row.verification,
          to: saved.verification,
        },
        'domain verification changed',
      )
    }
    return { row: saved, changed }
  }

  const createDomain = async (projectId: string, name: string) => {
    const end = keygenSeconds.startTimer()
    const key = await generateDkimKey()
    end()
    const at = new Date()
    return store.create(
      {
        id: newId('domain'),
        projectId,
        name,
        dkimPrivateKey: key.privateKeyPem,
        dkimPublicKey: key.publicKeyB64,
      },
      (taken) => {
        const selector = dkimSelector(at, taken)
        return {
          dkimSelector: selector,
          records: buildRecords(name, selector, key.publicKeyB64, env.SPF_INCLUDE),
        }
      },
    )
  }

  serveRoutes(rt.bus, QUEUE, {
    'api.email.domains.setup': async ({ caller, params, body }) => {
      parseOptionalBody(SetupDomainBody, body)
      const name = normalizeDomainName(params.domain ?? '')
      if (!name) throw fail('invalid_body', `'${params.domain ?? ''}' is not a domain name`, 'domain')
      const project = await rt.bus.request(
        SUBJECTS.authResolveProject,
        { slug: params.slug ?? '' },
        { schema: ResolveProjectResponse },
      )
      let row = await store.find(project.id, name)
      let created = false
      if (!row) {
        // Checked for new domains only: one set up before this limit keeps its setup route.
        if (name.length > MAX_SENDING_DOMAIN_LENGTH) {
          throw fail(
            'invalid_body',
            `A sending domain has at most ${MAX_SENDING_DOMAIN_LENGTH} characters: its DKIM record name must fit in DNS's 253`,
            'domain',
          )
        }
        const made = await createDomain(project.id, name)
        row = made.row
        created = made.created
        if (created) {
          rt.logger.info(
            { requestId: caller.requestId, projectId: project.id, domain: name },
            'domain created',
          )
        }
      }
      // Setup always checks at once, so a repeated setup doubles as "verify now".
      const checked = await recheck(row, caller)
      if (created || checked.changed) await invalidate(project.id)
      return toDomainRecord(checked.row)
    },

    'api.email.domains.list': async ({ caller, query }) => {
      const { refresh } = parseQuery(DomainsQuery, query)
      const project = requireProject(caller)
      let rows = await store.listByProject(project.id)
      if (refresh) {
        const checked = await Promise.all(rows.map((r) => recheck(r, caller)))
        rows = checked.map((c) => c.row)
        if (checked.some((c) => c.changed)) await invalidate(project.id)
      }
      return { data: rows.map(toDomainRecord) }
    },

    'api.email.domains.list-all': async ({ caller }) => {
      const [rows, slugs] = await Promise.all([store.listAll(), projectSlugs(rt, caller)])
      const data: AdminDomainRecord[] = rows.map((r) => ({
        ...toDomainRecord(r),
        projectId: r.projectId,
        slug: slugs.get(r.projectId) ?? null,
      }))
      return { data }
    },
  })
}

const ProjectList = z.object({ data: z.array(ProjectRecord.pick({ id: true, slug: true })) })

/**
 * Project slugs come from the auth service, which owns projects: one admin list request, the
 * same the admin API serves (projects are few, so this is cheaper than a lookup per domain).
 */
async function projectSlugs(rt: Runtime, caller: Caller): Promise<Map<string, string>> {
  // The subject of `GET /v1/admin/projects` in the route catalog (subjects are never renamed).
  const res = await rt.bus.request(
    'api.auth.projects.list',
    { caller: { ...caller, project: null }, params: {}, query: {}, headers: {} },
    { schema: ProjectList },
  )
  return new Map(res.data.map((p) => [p.id, p.slug]))
}
