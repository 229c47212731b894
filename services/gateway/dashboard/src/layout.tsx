import { type ReactNode, useEffect, useRef, useState } from 'react'
import { useNotify } from './components/notices.js'
import { ApiError } from './lib/api.js'
import { lastProject, ProjectSelect, rememberProject } from './lib/projects.js'
import { Link, navigate, useLocation } from './lib/router.js'
import { type ThemeChoice, useTheme } from './lib/theme.js'

const MAIN_NAV: [string, string][] = [
  ['projects', 'Projects'],
  ['emails', 'Emails'],
  ['domains', 'Domains'],
  ['suppressions', 'Suppressions'],
  ['analytics', 'Analytics'],
]

const PROJECT_NAV: [string, string][] = [
  ['', 'Settings & keys'],
  ['webhooks', 'Webhooks'],
  ['templates', 'Templates'],
  ['contacts', 'Contacts'],
  ['audiences', 'Audiences'],
  ['broadcasts', 'Broadcasts'],
]

function NavLink({ to, label, current }: { to: string; label: string; current: boolean }) {
  return (
    <Link to={to} className={current ? 'current' : undefined} aria-current={current ? 'page' : undefined}>
      {label}
    </Link>
  )
}

function ThemeSelect() {
  const [theme, setTheme] = useTheme()
  return (
    <label className="theme-select">
      <span className="muted small">Theme </span>
      <select value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
        <option value="system">Auto</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  )
}

/** The frame of every signed-in page: skip link, top bar, navigation, main region. */
export function Layout({
  children,
  onSignOut,
}: {
  children: ReactNode
  /** Rejects when the gateway did not sign out: the session goes on, and the operator is told. */
  onSignOut: () => Promise<void>
}) {
  const { path } = useLocation()
  const notify = useNotify()
  const signOut = () =>
    onSignOut().catch((e: Error) =>
      notify(`Not signed out: ${e.message}${e instanceof ApiError ? ` (${e.code})` : ''}`, 'error'),
    )
  const [menuOpen, setMenuOpen] = useState(false)
  const slugInPath = /^projects\/([^/]+)/.exec(path)?.[1]
  const slug = slugInPath ? decodeURIComponent(slugInPath) : (lastProject() ?? '')
  const section = /^projects\/[^/]+\/([^/]+)/.exec(path)?.[1] ?? ''
  if (slugInPath) rememberProject(slug)

  // After a navigation, move focus to the new page's heading so screen readers announce it.
  const first = useRef(true)
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every navigation, which `path` stands for
  useEffect(() => {
    setMenuOpen(false)
    if (first.current) {
      first.current = false
      return
    }
    document.getElementById('page-title')?.focus({ preventScroll: true })
  }, [path])

  const top = path.split('/')[0] || 'projects'
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="projects" className="brand">
          Mailer
        </Link>
        <button
          type="button"
          className="btn small menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen((o) => !o)}
        >
          Menu
        </button>
        <div className="topbar-actions">
          <ThemeSelect />
          <button type="button" className="btn small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <div className="layout">
        <nav id="sidebar" className={`sidebar${menuOpen ? ' open' : ''}`} aria-label="Main">
          <ul>
            {MAIN_NAV.map(([to, label]) => (
              <li key={to}>
                <NavLink to={to} label={label} current={top === to && !(to === 'projects' && slugInPath)} />
              </li>
            ))}
          </ul>
          <div className="nav-project">
            <label htmlFor="nav-project">Project</label>
            <ProjectSelect
              id="nav-project"
              value={slug}
              onChange={(s) =>
                s && navigate(`projects/${encodeURIComponent(s)}${section ? `/${section}` : ''}`)
              }
            />
            {slug && (
              <ul>
                {PROJECT_NAV.map(([sub, label]) => (
                  <li key={sub}>
                    <NavLink
                      to={`projects/${encodeURIComponent(slug)}${sub ? `/${sub}` : ''}`}
                      label={label}
                      current={Boolean(slugInPath) && section === sub}
                    />
                  </li>
                ))}
              </ul>
            )}
          </div>
        </nav>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
    </>
  )
}
