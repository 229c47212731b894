import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { settleWithin } from '../support/infra.js'
import { ADMIN_KEY } from '../support/stack.js'

const ROOT = join(import.meta.dirname, '..', '..')
const DASHBOARD = join(ROOT, 'services', 'gateway', 'dashboard')
export const SCREENSHOTS = join(ROOT, 'test-output', 'dashboard')

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)
  }
  return newest
}

/**
 * The gateway serves the built dashboard. `make test` builds it first; a test file run on its
 * own builds it here when dist/ is missing or older than the sources.
 */
export function ensureDashboardBuilt(): void {
  const index = join(DASHBOARD, 'dist', 'index.html')
  const sources = Math.max(
    newestMtime(join(DASHBOARD, 'src')),
    statSync(join(DASHBOARD, 'index.html')).mtimeMs,
  )
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return
  execFileSync('pnpm', ['--filter', '@mailer/dashboard', 'build'], {
    cwd: ROOT,
    // Vite builds for the NODE_ENV it finds, and vitest sets `test`: React's development build, whose
    // StrictMode runs every effect twice (two reads of each resource where the page makes one).
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: 'pipe',
    timeout: 300_000,
  })
}

export const CHROMIUM = '/usr/bin/chromium'

/**
 * Debian's Chromium through playwright-core, headless, with a fresh profile that is removed on close.
 * `timezoneId` runs the pages in that zone (an operator far from UTC), e.g. `America/Los_Angeles`.
 */
export async function launchBrowser(
  opts: { timezoneId?: string } = {},
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  const profile = mkdtempSync(join(tmpdir(), 'mailer-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  // Loaded machines are slow; fail with a clear message rather than a vitest time-out.
  context.setDefaultTimeout(30_000)
  return {
    context,
    // Bounded: on a loaded machine Chromium can take its time to exit, and a test file's
    // teardown must not fail for it (playwright kills the browser when the worker exits anyway).
    close: async () => {
      await settleWithin(
        context.close().catch(() => undefined),
        15_000,
      )
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

const nextFrames = (page: Page) =>
  page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')

/**
 * Saves `test-output/dashboard/<name>.png` (gitignored) of the whole page. Instead of a `fullPage`
 * capture, the viewport is grown to the page's height: sandboxed preview frames are rendered out
 * of process and only painted while inside the viewport, so a beyond-viewport capture shows them
 * blank although the operator sees them.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const viewport = page.viewportSize() ?? { width: 1280, height: 900 }
  const height = Number(await page.evaluate('document.documentElement.scrollHeight'))
  await page.setViewportSize({
    width: viewport.width,
    height: Math.min(Math.max(height, viewport.height), 8000),
  })
  await nextFrames(page)
  if ((await page.locator('iframe').count()) > 0) await page.waitForTimeout(300) // out-of-process frames paint
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) })
  await page.setViewportSize(viewport)
}

/**
 * Elements that stick out past the right edge of the viewport (the page would scroll sideways),
 * as short descriptions; scrolling containers such as wide tables are fine and not looked into.
 */
export async function horizontalOverflow(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const width = document.documentElement.clientWidth
    const out = []
    const scrolls = (el) => { const o = getComputedStyle(el).overflowX; return o === 'auto' || o === 'scroll' || o === 'hidden' }
    const walk = (el) => {
      for (const c of el.children) {
        const r = c.getBoundingClientRect()
        if (r.right > width + 1 && r.width > 0) out.push(c.tagName.toLowerCase() + (c.className ? '.' + String(c.className).split(' ').join('.') : '') + ' ' + Math.round(r.right))
        if (!scrolls(c)) walk(c)
      }
    }
    walk(document.body)
    return out
  })()`)) as string[]
}

/** Screens the current page in the four looks that matter: light and dark, desktop and phone. */
export async function screenshotAllLooks(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    for (const [label, width] of [
      ['1280', 1280],
      ['390', 390],
    ] as const) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 })
      // Two frames: the resize observers (charts) have redrawn before the picture is taken.
      await nextFrames(page)
      if (width === 390) expect(await horizontalOverflow(page), `${name} at 390 px`).toEqual([])
      await screenshot(page, `${name}-${scheme}-${label}`)
    }
  }
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize({ width: 1280, height: 900 })
}

/**
 * Collects what must never happen on a dashboard page: script errors, dialogs, and console errors
 * (CSP violations are reported there). Failed requests the app handles (a wrong admin key, a
 * refused form) are logged by Chromium as "Failed to load resource" and are not problems; the
 * visit before sign-in makes none (dashboard-edits.e2e.test.ts checks every line there).
 */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
      problems.push(`console: ${m.text()}`)
  })
  // Recorded, then dismissed: with a listener Playwright no longer dismisses a dialog itself, and
  // one left open would freeze the page until every later wait timed out.
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`)
    void d.dismiss().catch(() => undefined)
  })
}

export interface UseBrowserOptions {
  /** The pages' time zone (launchBrowser's `timezoneId`), e.g. `America/Los_Angeles`. */
  timezoneId?: string
  /** Collect the page's problems (watchProblems) in `problems`; `false` for a file that listens itself. */
  watch?: boolean
}

export interface UsedBrowser {
  /** The browser's context (a second tab, its cookies); only once useBrowser's `beforeAll` has run. */
  readonly context: BrowserContext
  /** The file's page; only once useBrowser's `beforeAll` has run. */
  readonly page: Page
  /** What watchProblems saw on the page, and on the pages the file watches with it. */
  problems: string[]
  /** The h1 of exactly this name, on the file's page unless `p` is given. */
  heading(name: string, p?: Page): Locator
  /** Goes to `/dashboard/<path>` of the gateway, on the file's page unless `p` is given. */
  goto(path: string, p?: Page): Promise<unknown>
  /** A link of the main navigation. */
  nav(name: string): Locator
  /** Goes to `/dashboard/<path>`, signs in with the admin key and waits for the h1 `landing`. */
  signIn(path?: string, landing?: string, p?: Page): Promise<void>
  /** Opens `/dashboard/<path>`, signing in first when this browser has no session yet (a test run alone). */
  open(path: string): Promise<void>
  /** The file's last test: no script error, CSP violation or dialog on the watched pages. */
  itShowsNoProblems(title?: string): void
}

/**
 * A test file's browser: Chromium launched with a page (watched for problems) in a `beforeAll`,
 * closed in an `afterAll`. `gatewayUrl` is read when a helper goes to a page, so it may be the
 * stack's gateway, started by then. Call it after useStack: its `beforeAll` runs once the services
 * are up, its `afterAll` before they stop. Files with several browsers or contexts use
 * launchBrowser itself.
 */
export function useBrowser(gatewayUrl: () => string, opts: UseBrowserOptions = {}): UsedBrowser {
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined
  let page: Page | undefined
  const problems: string[] = []
  const url = (path: string) => {
    const base = gatewayUrl()
    if (!base) throw new Error('useBrowser: the gateway is not running (not started, or not yet)')
    return `${base}/dashboard/${path}`
  }

  beforeAll(async () => {
    browser = await launchBrowser({ timezoneId: opts.timezoneId })
    page = await browser.context.newPage()
    if (opts.watch !== false) watchProblems(page, problems)
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
  }, 120_000)

  const used: UsedBrowser = {
    get context() {
      if (!browser) throw new Error('useBrowser: no browser yet (it is launched in a beforeAll)')
      return browser.context
    },
    get page() {
      if (!page) throw new Error('useBrowser: no page yet (it is opened in a beforeAll)')
      return page
    },
    problems,
    heading: (name, p = used.page) => p.getByRole('heading', { level: 1, name, exact: true }),
    goto: async (path, p = used.page) => p.goto(url(path)),
    nav: (name) =>
      used.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }),
    async signIn(path = '', landing = 'Projects', p = used.page) {
      await used.goto(path, p)
      await p.getByLabel('Admin key').fill(ADMIN_KEY)
      await p.getByRole('button', { name: 'Sign in' }).click()
      await used.heading(landing, p).waitFor()
    },
    async open(path) {
      const p = used.page
      await used.goto(path)
      const key = p.getByLabel('Admin key')
      await key.or(p.locator('#page-title')).first().waitFor()
      if (await key.isVisible()) {
        await key.fill(ADMIN_KEY)
        await p.getByRole('button', { name: 'Sign in' }).click()
        await p.locator('#page-title').waitFor()
      }
    },
    itShowsNoProblems(title = 'shows no script error, CSP violation or dialog') {
      if (opts.watch === false) throw new Error('useBrowser: the page is not watched (watch: false)')
      it(title, () => {
        expect(problems).toEqual([])
      })
    },
  }
  return used
}
