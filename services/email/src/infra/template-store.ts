import { type Cursor, fail, newId, noSuch, TEMPLATE_NAME_RE } from '@mailer/contracts'
import { type Db, likeLiteral, type Prisma, type Template, type TemplateVersion } from '@mailer/db'
import { storedVariables, type TemplateContent } from '../domain/template-records.js'

type Tx = Prisma.TransactionClient

const notFound = (name: string) =>
  fail('template_not_found', noSuch('template', 'name', name, TEMPLATE_NAME_RE), 'name')

/** A template's current content, for the send path's cache. */
export interface CurrentTemplate extends TemplateContent {
  version: number
}

const versionRow = (templateId: string, version: number, c: TemplateContent, at: Date) => ({
  templateId,
  version,
  subject: c.subject,
  html: c.html,
  text: c.text,
  variables: c.variables as unknown as Prisma.InputJsonValue,
  createdAt: at,
})

/** The templates and template_versions tables; every version is kept until the template is deleted. */
export class TemplateStore {
  constructor(private readonly db: Db) {}

  /** Version 1 of a new template; 409 `template_exists` when the project already has the name. */
  async create(projectId: string, name: string, content: TemplateContent): Promise<Template> {
    const now = new Date()
    const id = newId('template')
    return this.db.$transaction(async (tx) => {
      const { count } = await tx.template.createMany({
        data: [
          {
            id,
            projectId,
            name,
            subject: content.subject,
            html: content.html,
            text: content.text,
            variables: content.variables as unknown as Prisma.InputJsonValue,
            version: 1,
            createdAt: now,
            updatedAt: now,
          },
        ],
        skipDuplicates: true,
      })
      if (count === 0) throw fail('template_exists', `A template named '${name}' already exists`, 'name')
      await tx.templateVersion.create({ data: versionRow(id, 1, content, now) })
      return tx.template.findUniqueOrThrow({ where: { id } })
    })
  }

  async get(projectId: string, name: string): Promise<Template> {
    const t = await this.db.template.findUnique({ where: { projectId_name: { projectId, name } } })
    if (!t) throw notFound(name)
    return t
  }

  /** For the send path: null when there is no such template. */
  async current(projectId: string, name: string): Promise<CurrentTemplate | null> {
    const t = await this.db.template.findUnique({
      where: { projectId_name: { projectId, name } },
      select: { subject: true, html: true, text: true, variables: true, version: true },
    })
    return t ? { ...t, variables: storedVariables(t.variables) } : null
  }

  async list(projectId: string, opts: { q?: string; limit: number; after?: Cursor }): Promise<Template[]> {
    const where: Prisma.TemplateWhereInput = { projectId }
    // Names hold `_`: a search for `order_paid` must not find `orderxpaid`.
    if (opts.q) where.name = { contains: likeLiteral(opts.q.toLowerCase()) }
    if (opts.after) {
      where.OR = [
        { createdAt: { lt: opts.after.createdAt } },
        { createdAt: opts.after.createdAt, id: { lt: opts.after.id } },
      ]
    }
    return this.db.template.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: opts.limit + 1,
    })
  }

  /**
   * Makes the next version from the current content. The row lock serialises concurrent changes,
   * so each becomes its own version; `expectedVersion` (when given) must still be current, else
   * 409 `template_conflict`. `change` may throw (a MailerError) to reject the new content.
   */
  async update(
    projectId: string,
    name: string,
    change: (current: TemplateContent) => TemplateContent,
    expectedVersion?: number,
  ): Promise<Template> {
    return this.db.$transaction(async (tx) => {
      const cur = await this.lock(tx, projectId, name)
      if (expectedVersion !== undefined && expectedVersion !== cur.version) {
        throw fail(
          'template_conflict',
          `The template is at version ${cur.version}, not ${expectedVersion}; fetch it and try again`,
          'version',
        )
      }
      const next = change({
        subject: cur.subject,
        html: cur.html,
        text: cur.text,
        variables: storedVariables(cur.variables),
      })
      return this.writeVersion(tx, cur, next)
    })
  }

  /**
   * Makes an old version current again, as a new version (history is never rewritten). `check`
   * vets the old content as a save would (it may have been saved under laxer rules) and may throw.
   */
  async restore(
    projectId: string,
    name: string,
    version: number,
    check: (old: TemplateContent) => TemplateContent,
  ): Promise<Template> {
    return this.db.$transaction(async (tx) => {
      const cur = await this.lock(tx, projectId, name)
      const old = await tx.templateVersion.findUnique({
        where: { templateId_version: { templateId: cur.id, version } },
      })
      if (!old) {
        throw fail('template_version_not_found', `Template '${name}' has no version ${version}`, 'version')
      }
      return this.writeVersion(
        tx,
        cur,
        check({
          subject: old.subject,
          html: old.html,
          text: old.text,
          variables: storedVariables(old.variables),
        }),
      )
    })
  }

  async delete(projectId: string, name: string): Promise<Template> {
    return this.db.$transaction(async (tx) => {
      const cur = await this.lock(tx, projectId, name)
      await tx.templateVersion.deleteMany({ where: { templateId: cur.id } })
      await tx.template.delete({ where: { id: cur.id } })
      return cur
    })
  }

  /**
   * Versions newest first, below `before` when paging on: at most `limit`, and no more than fit
   * `maxBytes` of stored content together (at least one), measured before the rows are read, so
   * a page of large versions is never loaded whole. `more`: versions follow the ones returned.
   */
  async versions(
    projectId: string,
    name: string,
    opts: { limit: number; before?: number; maxBytes: number },
  ): Promise<{ rows: TemplateVersion[]; more: boolean }> {
    const t = await this.get(projectId, name)
    // Versions are at most 2^31 - 1 (an int column).
    const upTo = opts.before !== undefined ? opts.before - 1 : 2_147_483_647
    const sizes = await this.db.$queryRaw<Array<{ version: number; bytes: number }>>`
      SELECT version, (coalesce(octet_length(subject), 0) + coalesce(octet_length(html), 0)
        + coalesce(octet_length(text), 0) + octet_length(variables::text))::int AS bytes
      FROM template_versions WHERE template_id = ${t.id} AND version <= ${upTo}
      ORDER BY version DESC LIMIT ${opts.limit + 1}`
    let take = 0
    let total = 0
    for (const s of sizes.slice(0, opts.limit)) {
      total += s.bytes
      if (take > 0 && total > opts.maxBytes) break
      take++
    }
    if (take === 0) return { rows: [], more: false }
    const rows = await this.db.templateVersion.findMany({
      where: { templateId: t.id, version: { lte: sizes[0]!.version, gte: sizes[take - 1]!.version } },
      orderBy: { version: 'desc' },
    })
    return { rows, more: sizes.length > take }
  }

  private async lock(tx: Tx, projectId: string, name: string): Promise<Template> {
    const rows = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM templates WHERE project_id = ${projectId} AND name = ${name} FOR UPDATE`
    const id = rows[0]?.id
    if (!id) throw notFound(name)
    return tx.template.findUniqueOrThrow({ where: { id } })
  }

  private async writeVersion(tx: Tx, cur: Template, next: TemplateContent): Promise<Template> {
    const now = new Date()
    const version = cur.version + 1
    await tx.templateVersion.create({ data: versionRow(cur.id, version, next, now) })
    return tx.template.update({
      where: { id: cur.id },
      data: {
        subject: next.subject,
        html: next.html,
        text: next.text,
        variables: next.variables as unknown as Prisma.InputJsonValue,
        version,
        updatedAt: now,
      },
    })
  }
}
