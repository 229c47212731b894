import type { Page, Route } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { projectWithDomain } from '../support/emails.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, useBrowser } from './browser.js'

// A filtered email list reads at most LIST_SCAN_ROWS rows per page (here 10): a rare status answers
// empty pages with a cursor, and the Emails page must still offer "Load more" and keep what it
// found when its first page is read again. Polling pages never start a read while their last one
// is still running (once a page has opened, the browser's clock is paused and driven by hand: no
// timer fires on its own, and nothing waits on real time).
const { te, stack, client } = useStack(['auth', 'email', 'gateway'], {
  env: { LIST_SCAN_ROWS: '10' },
  before: () => ensureDashboardBuilt(),
  timeout: 240_000,
})
const ui = useBrowser(() => stack.gatewayUrl)

const SLUG = 'e2e-scan'
const n3 = (i: number) => String(i).padStart(3, '0')
/** Subjects oldest first; the two oldest get the rare status. */
const SUBJECTS = Array.from({ length: 30 }, (_, i) => `mail-${n3(i)}`)
const RARE = ['mail-000', 'mail-001']

beforeAll(async () => {
  const p = await projectWithDomain(client, SLUG)
  for (const subject of SUBJECTS) {
    // One by one: each its own creation time, so the newest-first order is the subjects' reverse.
    const r = await client.post('/v1/emails', p.test, {
      from: p.from,
      to: 'x@example.com',
      subject,
      text: subject,
    })
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300)
  }
  await sql(te, `UPDATE emails SET status = 'complained' WHERE subject = ANY($1)`, [RARE])
  await ui.signIn('projects')
}, 240_000)

/** Holds the requests `matches` picks (after letting `free` of them through) until released. */
async function holdRequests(page: Page, matches: (u: URL) => boolean, free: number) {
  let seen = 0
  let release!: () => void
  const held = new Promise<void>((r) => {
    release = r
  })
  await page.route(matches, async (route: Route) => {
    seen++
    if (seen > free) await held
    await route.continue()
  })
  return { count: () => seen, release }
}

/**
 * Returns once every request the page started before it has reached the route handlers: a request
 * made now goes through the same interception, after them.
 */
const settled = (page: Page) => page.evaluate("fetch('/health').then(() => undefined)")

/**
 * Stops the page's clock (installed before it opened): from here its timers fire only as
 * `clock.runFor` moves time on, so no poll starts on its own while a test looks. It stops a
 * second on from the page's now, as if that second had passed: pauseAt cannot go back, and the
 * page's time flows on while the call is on its way.
 */
const pauseClock = async (page: Page) =>
  page.clock.pauseAt((await page.evaluate<number>('Date.now()')) + 1_000)

describe('dashboard: bounded list scans and polling', { timeout: 120_000 }, () => {
  it('pages on through empty pages of a rare status and keeps the rows found when the list refreshes', async () => {
    const page = await ui.context.newPage()
    await page.clock.install()
    await ui.goto(`emails?project=${SLUG}&status=complained`, page)
    await ui.heading('Emails', page).waitFor()
    // None among the 10 newest: not "no emails match", but a way to search further back.
    await page.getByTestId('emails-none-yet').waitFor()
    await pauseClock(page)
    expect(await page.getByText('No emails match these filters.').count()).toBe(0)
    const rows = page.getByTestId('email-row')
    const more = page.getByRole('button', { name: 'Load more' })
    for (let i = 0; i < 5 && (await more.count()) > 0; i++) {
      const read = page.waitForResponse((r) => r.url().includes('cursor='))
      await more.click()
      await read
      await page.getByRole('button', { name: 'Loading…' }).waitFor({ state: 'detached' })
    }
    await more.waitFor({ state: 'detached' })
    expect(await rows.getByRole('link').allTextContents()).toEqual([...RARE].reverse())

    // The first page is read again (empty, with a cursor): the rows found further down stay.
    const refreshed = page.waitForResponse(
      (r) => r.url().includes('/v1/admin/emails') && !r.url().includes('cursor='),
    )
    await page.clock.runFor(6_000)
    await refreshed
    // Two frames, for the answer to be rendered: frames follow the page's clock, so it runs again.
    await page.clock.resume()
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
    expect(await rows.getByRole('link').allTextContents()).toEqual([...RARE].reverse())
    await page.close()
  })

  /**
   * Opens `path` with the browser's clock driven by hand; once the page has read what it reads
   * on opening, the next read `matches` picks (the first poll) is held: while it is, `rounds` poll
   * intervals start no other such read; once it is answered, the next interval does.
   */
  async function pollsOneAtATime(
    path: string,
    matches: (u: URL) => boolean,
    everyMs: number,
    ready: (p: Page) => Promise<unknown>,
  ) {
    const page = await ui.context.newPage()
    await page.clock.install()
    await ui.goto(path, page)
    await ready(page)
    await pauseClock(page)
    await settled(page)
    const hold = await holdRequests(page, matches, 0)
    await page.clock.runFor(everyMs + 500)
    await expect.poll(hold.count).toBe(1)
    await page.clock.runFor(everyMs * 5)
    await settled(page)
    expect(hold.count()).toBe(1)
    hold.release()
    // Once its answer is in (the page reads its body after the response), an interval starts one.
    await expect
      .poll(async () => {
        await page.clock.runFor(everyMs)
        return hold.count()
      })
      .toBeGreaterThanOrEqual(2)
    await page.close()
  }

  it('the Emails page does not read its first page again while the last read is still running', async () => {
    await pollsOneAtATime(
      `emails?project=${SLUG}`,
      (u) => u.pathname.endsWith('/v1/admin/emails') && !u.searchParams.has('cursor'),
      5_000,
      (page) => page.getByTestId('email-row').first().waitFor(),
    )
  })

  it('nor does a page polling through useResource (projects: its stats)', async () => {
    await pollsOneAtATime(
      'projects',
      (u) => u.pathname.endsWith('/v1/admin/stats'),
      10_000,
      (page) => page.getByRole('row').filter({ hasText: SLUG }).waitFor(),
    )
  })
})

ui.itShowsNoProblems()
