import { createContext, type ReactNode, useContext } from 'react'
import { api } from './api.js'
import type { DataList, Project } from './types.js'
import { type Resource, useResource } from './use-resource.js'

const Ctx = createContext<Resource<DataList<Project>> | null>(null)

/** The project list, loaded once for the navigation and every project picker. */
export function ProjectsProvider({ children }: { children: ReactNode }) {
  const projects = useResource(() => api.get<DataList<Project>>('v1/admin/projects'), [])
  return <Ctx.Provider value={projects}>{children}</Ctx.Provider>
}

export function useProjects(): Resource<DataList<Project>> {
  const v = useContext(Ctx)
  if (!v) throw new Error('useProjects outside ProjectsProvider')
  return v
}

const LAST = 'mailer.dashboard.project'

/** The project last worked on, so project pages open where the operator left off. */
export function rememberProject(slug: string): void {
  try {
    window.localStorage.setItem(LAST, slug)
  } catch {
    /* not remembered in private mode */
  }
}

export function lastProject(): string | null {
  try {
    return window.localStorage.getItem(LAST)
  } catch {
    return null
  }
}

/** A `<select>` of projects; `allLabel` adds an "all projects" choice with the value ''. */
export function ProjectSelect({
  id,
  value,
  onChange,
  allLabel,
  describedBy,
}: {
  id: string
  value: string
  onChange: (slug: string) => void
  allLabel?: string
  describedBy?: string | undefined
}) {
  const { data } = useProjects()
  const list = data?.data ?? []
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={describedBy}>
      {allLabel !== undefined && <option value="">{allLabel}</option>}
      {allLabel === undefined && !value && <option value="">Choose a project</option>}
      {list.map((p) => (
        <option key={p.slug} value={p.slug}>
          {p.name} ({p.slug})
        </option>
      ))}
      {value && !list.some((p) => p.slug === value) && <option value={value}>{value}</option>}
    </select>
  )
}
