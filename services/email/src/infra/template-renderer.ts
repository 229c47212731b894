import { fail, noSuch, TEMPLATE_NAME_RE } from '@mailer/contracts'
import {
  type CompiledTemplate,
  checkRequired,
  compileTemplate,
  type RenderLimits,
  type VariableSpec,
} from '@mailer/templating'
import type { RenderedTemplate, TemplateRenderer } from '../domain/template.js'
import type { TemplateStore } from './template-store.js'

interface Entry {
  version: number
  ownText: boolean
  variables: VariableSpec[]
  compiled: CompiledTemplate
}

interface Slot {
  expiresAt: number
  entry: Promise<Entry | null>
}

/**
 * The send path's TemplateRenderer: compiled templates per project in memory, so a send with a
 * template costs no database round trip and no compile once warm. Changes drop the entry on
 * every replica (`templates.invalidate`); the TTL bounds staleness should an invalidation be
 * lost. Unknown names are not cached, so a template created a moment ago is found at once.
 */
export class TemplateCache implements TemplateRenderer {
  private readonly slots = new Map<string, Slot>()

  constructor(
    private readonly store: TemplateStore,
    private readonly ttlMs: number,
    private readonly maxEntries = 2_000,
  ) {}

  async render(
    projectId: string,
    name: string,
    data: Record<string, unknown>,
    limits: RenderLimits,
  ): Promise<RenderedTemplate> {
    const entry = await this.load(projectId, name)
    if (!entry)
      throw fail('template_not_found', noSuch('template', 'name', name, TEMPLATE_NAME_RE), 'template')
    checkRequired(entry.variables, data)
    return { ...entry.compiled.render(data, limits), ownText: entry.ownText, version: entry.version }
  }

  async prefetch(projectId: string, names: Iterable<string>): Promise<void> {
    await Promise.allSettled([...new Set(names)].map((name) => this.load(projectId, name)))
  }

  invalidate(projectId: string, name: string): void {
    this.slots.delete(key(projectId, name))
  }

  /** Every template (after a reconnect: invalidations sent meanwhile never arrived). */
  clear(): void {
    this.slots.clear()
  }

  private load(projectId: string, name: string): Promise<Entry | null> {
    const k = key(projectId, name)
    const now = Date.now()
    const hit = this.slots.get(k)
    if (hit && hit.expiresAt > now) return hit.entry
    // Concurrent sends of a batch share one fetch and compile.
    const entry = this.store.current(projectId, name).then((t) =>
      t
        ? {
            version: t.version,
            ownText: t.text !== null,
            variables: t.variables,
            compiled: compileTemplate(t, { name }),
          }
        : null,
    )
    const slot: Slot = { expiresAt: now + this.ttlMs, entry }
    this.slots.set(k, slot)
    const forget = () => {
      if (this.slots.get(k) === slot) this.slots.delete(k)
    }
    entry.then((e) => (e ? undefined : forget()), forget)
    if (this.slots.size > this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.slots.keys().next().value
      if (oldest !== undefined) this.slots.delete(oldest)
    }
    return entry
  }
}

const key = (projectId: string, name: string) => `${projectId}\u0000${name}`
