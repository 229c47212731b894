import type { Route } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { createProject } from '../support/http.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, launchBrowser, useBrowser } from './browser.js'

// Lists, refreshes and the session in a real Chromium: pickers and histories longer than one page
// of the API, the emails list's refresh racing "Load more", the projects' counts, the suppressions
// search box after a navigation, and a session that ends while a template is being edited.
// A failed webhook attempt waits an hour: only "Retry now" can deliver it again within the test.
// No dispatcher: emails are sent with a test key and stay `test`.
const { stack, client, receiver } = useStack(['auth', 'email', 'webhook', 'broadcast', 'gateway'], {
  testEnv: {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_MS: '500',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '3600,3600',
  },
  // The projects' counts (email_status_hours) refreshed every second rather than every minute.
  env: { STATS_REFRESH_SECONDS: '1' },
  receiver: true,
  before: () => ensureDashboardBuilt(),
  timeout: 240_000,
})
const ui = useBrowser(() => stack.gatewayUrl)

const SLUG = 'e2e-lists'
const mirror = `/v1/admin/projects/${SLUG}`

beforeAll(async () => {
  await createProject(client, SLUG)
  await ui.signIn('projects')
}, 240_000)

const n3 = (i: number) => String(i).padStart(3, '0')

async function created(res: Promise<{ status: number; body: any }>): Promise<any> {
  const r = await res
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300)
  return r.body
}

describe('dashboard lists, refreshes and session', { timeout: 120_000 }, () => {
  it('offers every audience in the contacts and broadcast pickers, beyond the first 100', async () => {
    for (let i = 0; i <= 100; i++)
      await created(client.post(`${mirror}/audiences`, client.admin, { name: `a${n3(i)}` }))
    await ui.goto(`projects/${SLUG}/contacts`)
    await ui.heading('Contacts').waitFor()
    // a000 is the oldest: on the API's second page.
    const filter = ui.page.getByRole('combobox', { name: 'Audience' })
    await filter.locator('option', { hasText: 'a000' }).waitFor({ state: 'attached' })
    expect(await filter.locator('option').count()).toBe(102) // "Any audience" + 101
    const boxes = ui.page.getByRole('group', { name: 'Audiences' }).getByRole('checkbox')
    expect(await boxes.count()).toBe(101)

    await ui.goto(`projects/${SLUG}/broadcasts`)
    await ui.heading('Broadcasts').waitFor()
    await ui.page.getByRole('button', { name: 'New broadcast' }).click()
    const picker = ui.page.getByRole('combobox', { name: 'Audience' })
    await picker.locator('option', { hasText: 'a000 (0)' }).waitFor({ state: 'attached' })
    await picker.selectOption({ label: 'a000 (0)' })
  })

  it("pages on through a template's version history and a webhook's deliveries", async () => {
    await created(
      client.post(`${mirror}/templates`, client.admin, { name: 'long', subject: 'v1', html: '<p>1</p>' }),
    )
    for (let v = 2; v <= 52; v++)
      await created(client.patch(`${mirror}/templates/long`, client.admin, { subject: `v${v}` }))
    await ui.goto(`projects/${SLUG}/templates/long`)
    await ui.heading('Template long').waitFor()
    const versions = ui.page.getByRole('table', { name: 'Versions' }).getByRole('row')
    await versions.filter({ hasText: 'v52' }).first().waitFor()
    expect(await versions.count()).toBe(51) // header + 50
    await ui.page.getByRole('button', { name: 'Load more' }).click()
    await versions.filter({ has: ui.page.getByRole('cell', { name: 'v1', exact: true }) }).waitFor()
    expect(await versions.count()).toBe(53)
    expect(await ui.page.getByRole('button', { name: 'Load more' }).count()).toBe(0)

    const hook = await created(client.post(`${mirror}/webhooks`, client.admin, { url: receiver.url('/h') }))
    for (let i = 0; i < 51; i++)
      await created(client.post(`${mirror}/webhooks/${hook.id}/test`, client.admin))
    await ui.goto(`projects/${SLUG}/webhooks/${hook.id}`)
    await ui.heading('Webhook').waitFor()
    const rows = ui.page.getByTestId('delivery-row')
    await rows.first().waitFor()
    expect(await rows.count()).toBe(50)
    await ui.page.getByRole('button', { name: 'Load more' }).click()
    await expect.poll(() => rows.count()).toBe(51)
    // The 3 s refresh keeps both pages.
    await ui.page.waitForResponse((r) => r.url().includes('/deliveries') && !r.url().includes('cursor='))
    await ui.page.waitForResponse((r) => r.url().includes('/deliveries') && r.url().includes('cursor='))
    expect(await rows.count()).toBe(51)
  })

  it('retries now a delivery that waits for its next attempt, once the endpoint is fixed', async () => {
    let down = true
    receiver.reply = (r) =>
      r.path === '/down' && down ? { status: 503, body: 'down' } : { status: 200, body: 'ok' }
    const hook = await created(
      client.post(`${mirror}/webhooks`, client.admin, { url: receiver.url('/down') }),
    )
    await created(client.post(`${mirror}/webhooks/${hook.id}/test`, client.admin))
    await ui.goto(`projects/${SLUG}/webhooks/${hook.id}`)
    const row = ui.page.getByTestId('delivery-row')
    await row.getByText(/^next in/).waitFor() // the first attempt failed: pending for an hour
    down = false
    await row.getByRole('button', { name: 'Retry now' }).click()
    await row.getByText('success', { exact: true }).waitFor()
    expect(await row.getByRole('cell', { name: '2', exact: true }).count()).toBe(1)
    expect(await row.getByRole('button', { name: /Retry/ }).textContent()).toBe('Retry')
  })

  it('shows every email once when the refresh of the first page lands while Load more is on its way', async () => {
    const p = await projectWithDomain(client, 'e2e-lists-mail')
    const send = (subjects: string[]) =>
      created(
        client.post(
          '/v1/emails/batch',
          p.test,
          subjects.map((subject) => ({ from: p.from, to: 'x@example.com', subject, text: subject })),
        ),
      )
    const old = Array.from({ length: 55 }, (_, i) => `old-${n3(i)}`)
    await send(old)
    await ui.goto('emails?project=e2e-lists-mail')
    await ui.heading('Emails').waitFor()
    const rows = ui.page.getByTestId('email-row')
    await expect.poll(() => rows.count()).toBe(50)

    // Hold the second page until a refresh of the first page, with 3 newer emails, has landed.
    let release!: () => void
    const held = new Promise<void>((r) => {
      release = r
    })
    await ui.page.route(
      (u) => u.pathname.endsWith('/v1/admin/emails') && u.searchParams.has('cursor'),
      async (route: Route) => {
        await held
        await route.continue()
      },
    )
    const more = ui.page.waitForResponse((r) => r.url().includes('cursor='))
    await ui.page.getByRole('button', { name: 'Load more' }).click()
    const fresh = ['new-0', 'new-1', 'new-2']
    await send(fresh)
    await rows.filter({ hasText: 'new-2' }).waitFor()
    release()
    await more
    await ui.page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' })
    const subjects = (await rows.getByRole('link').allTextContents()).sort()
    expect(subjects).toEqual([...fresh, ...old].sort())
    await ui.page.unroute(() => true)
  })

  it("refreshes the projects' email counts while the page is open", async () => {
    const p = await projectWithDomain(client, 'e2e-lists-stats')
    await ui.goto('projects')
    await ui.heading('Projects').waitFor()
    const row = ui.page.getByRole('row').filter({ hasText: 'e2e-lists-stats' })
    await row.waitFor()
    // "Today" is the UTC day (the one the daily limit counts), not the browser's: it says so.
    expect(await ui.page.getByRole('columnheader', { name: 'Emails today (UTC)' }).count()).toBe(1)
    await ui.page.waitForResponse((r) => r.url().endsWith('/v1/admin/stats'))
    await created(
      client.post('/v1/emails/batch', p.test, [
        { from: p.from, to: 'a@example.com', subject: 's', text: 's' },
        { from: p.from, to: 'b@example.com', subject: 's', text: 's' },
      ]),
    )
    // Today (UTC), then last 7 days: 2 each, without a reload.
    await row.getByRole('cell', { name: '2', exact: true }).nth(1).waitFor()
  })

  it("starts no new poll of the projects' counts while the previous one is unanswered", async () => {
    // A browser of its own: its clock is Playwright's, moved on by hand.
    const b = await launchBrowser()
    try {
      await b.context.clock.install()
      const page = await b.context.newPage()
      const held: Route[] = []
      await page.route(
        (u) => u.pathname.endsWith('/v1/admin/stats'),
        (route) => void held.push(route),
      )
      await ui.signIn('projects', 'Projects', page)
      await expect.poll(() => held.length).toBe(1)
      // A minute of 10 s polls with the first answer still missing: no request is added.
      await page.clock.runFor(60_000)
      expect(held.length).toBe(1)
      await held[0]!.continue()
      // Polls resume once the page has the answer, which reaches it a moment after continue()
      // (a tick before that is skipped as busy): the clock moves on until the next poll is made.
      await expect
        .poll(async () => {
          await page.clock.runFor(10_000)
          return held.length
        })
        .toBe(2)
      await held[1]!.continue()
    } finally {
      await b.close()
    }
  })

  it('empties the suppressions search box when the navigation clears the search', async () => {
    await ui.nav('Suppressions').click()
    await ui.heading('Suppressions').waitFor()
    const box = ui.page.getByRole('searchbox', { name: 'Search addresses' })
    await box.fill('nobody')
    await ui.page.getByRole('button', { name: 'Search', exact: true }).click()
    await ui.page.getByText('No suppressed address matches.').waitFor()
    await ui.nav('Suppressions').click()
    await ui.page.getByText('No suppressed addresses.').waitFor()
    expect(await box.inputValue()).toBe('')
    await ui.page.goBack()
    await ui.page.getByText('No suppressed address matches.').waitFor()
    expect(await box.inputValue()).toBe('nobody')
  })

  it('keeps the pages of suppressions shown when one on a later page is removed', async () => {
    for (let i = 0; i < 102; i++)
      await created(
        client.post('/v1/admin/suppressions', client.admin, { address: `bulk-${n3(i)}@example.com` }),
      )
    await ui.goto('suppressions?q=bulk-')
    const rows = ui.page.getByTestId('suppression-row')
    await expect.poll(() => rows.count()).toBe(100)
    await ui.page.getByRole('button', { name: 'Load more' }).click()
    await expect.poll(() => rows.count()).toBe(102)
    const oldest = rows.filter({ hasText: 'bulk-000@example.com' }) // on the second page
    await oldest.getByRole('button', { name: 'Remove' }).click()
    await ui.page
      .getByRole('dialog', { name: 'Remove bulk-000@example.com?' })
      .getByRole('button', { name: 'Remove' })
      .click()
    await oldest.waitFor({ state: 'detached' })
    await expect.poll(() => rows.count()).toBe(101) // every other row, the second page's too
    expect(await rows.filter({ hasText: 'bulk-001@example.com' }).count()).toBe(1)
    expect(await ui.page.getByRole('button', { name: 'Load more' }).count()).toBe(0)
  })

  it('keeps the page and what was typed when the session ends, behind a sign-in', async () => {
    await created(
      client.post(`${mirror}/templates`, client.admin, { name: 'draft', subject: 'Hi', html: '<p>1</p>' }),
    )
    await ui.goto(`projects/${SLUG}/templates/draft`)
    await ui.heading('Template draft').waitFor()
    const form = ui.page.getByRole('form', { name: 'Edit template' })
    const html = form.getByLabel('HTML')
    await html.fill('<p>Unsaved work</p>')
    await ui.context.clearCookies() // the session ends (expiry, a sign-out elsewhere)
    await form.getByRole('button', { name: 'Save new version' }).click()
    const dialog = ui.page.getByRole('dialog', { name: 'Sign in again' })
    await dialog.waitFor()
    // Escape puts it aside (to copy something out); the next refused request brings it back.
    await ui.page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })
    await form.getByRole('alert').filter({ hasText: 'invalid_session' }).waitFor()
    await form.getByRole('button', { name: 'Save new version' }).click()
    await dialog.getByLabel('Admin key').fill(ADMIN_KEY)
    await dialog.getByRole('button', { name: 'Sign in' }).click()
    await dialog.waitFor({ state: 'detached' })
    // Nothing was sent again by itself: still version 1, and the edit is still there to save.
    expect((await client.get(`${mirror}/templates/draft`, client.admin)).body.version).toBe(1)
    expect(await html.inputValue()).toBe('<p>Unsaved work</p>')
    await form.getByRole('button', { name: 'Save new version' }).click()
    await ui.page.getByText('Saved as version 2').waitFor()
    expect((await client.get(`${mirror}/templates/draft`, client.admin)).body.html).toBe(
      '<p>Unsaved work</p>',
    )
  })

  ui.itShowsNoProblems()
})
