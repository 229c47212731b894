import type { Response } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../support/http.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, useBrowser, watchProblems } from './browser.js'

// How the dashboard behaves for an operator beyond the happy path, in a real Chromium running in
// a time zone far from UTC: errors name the API's code and request id, a second tab survives a
// sign-in made in another one, analytics' UTC days keep their dates, and long lists page on.
// No dispatcher or webhook service: nothing here is delivered.
const { stack, client } = useStack(['auth', 'email', 'broadcast', 'analytics', 'gateway'], {
  before: () => ensureDashboardBuilt(),
  timeout: 240_000,
})
const ui = useBrowser(() => stack.gatewayUrl, { timezoneId: 'America/Los_Angeles' })

const SLUG = 'e2e-ops'

beforeAll(async () => {
  await createProject(client, SLUG)
  await ui.signIn('projects')
}, 240_000)

const requestId = (r: Response) => r.headerValue('x-request-id')
const isApi = (r: Response, method: string, path: string) =>
  r.request().method() === method && new URL(r.url()).pathname === `/dashboard/api/${path}`

describe('the dashboard beyond the happy path', { timeout: 120_000 }, () => {
  it("shows the API's code and request id for an error in a form and in a confirmation", async () => {
    await ui.goto('projects')
    await ui.heading('Projects').waitFor()
    await ui.page.getByRole('button', { name: 'New project' }).click()
    const form = ui.page.getByRole('form', { name: 'Create a project' })
    await form.getByLabel('Slug').fill(SLUG) // taken
    await form.getByLabel('Name', { exact: true }).fill('Again')
    const answer = ui.page.waitForResponse((r) => isApi(r, 'POST', 'v1/admin/projects'))
    await form.getByRole('button', { name: 'Create project' }).click()
    const res = await answer
    expect(res.status()).toBe(409)
    const id = await requestId(res)
    expect(id).toBeTruthy()
    const alert = form.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toContain('slug_taken')
    expect(await alert.textContent()).toContain(id!)

    // An audience a draft broadcast uses cannot be deleted: the dialog says why, with the id.
    const aud = await client.post(`/v1/admin/projects/${SLUG}/audiences`, client.admin, { name: 'Busy' })
    const bc = await client.post(`/v1/admin/projects/${SLUG}/broadcasts`, client.admin, {
      audienceId: aud.body.id,
      from: 'news@ops.e2e.test',
      subject: 'Draft',
      html: '<p>x</p>',
    })
    expect(bc.status).toBe(201)
    await ui.goto(`projects/${SLUG}/audiences`)
    await ui.page.getByRole('row').filter({ hasText: 'Busy' }).getByRole('button', { name: 'Delete' }).click()
    const dialog = ui.page.getByRole('dialog', { name: 'Delete audience Busy?' })
    const refused = ui.page.waitForResponse((r) =>
      isApi(r, 'DELETE', `v1/admin/projects/${SLUG}/audiences/${aud.body.id}`),
    )
    await dialog.getByRole('button', { name: 'Delete' }).click()
    const refusal = await refused
    expect(refusal.status()).toBe(409)
    const dialogAlert = dialog.getByRole('alert')
    await dialogAlert.waitFor()
    expect(await dialogAlert.textContent()).toContain('audience_in_use')
    expect(await dialogAlert.textContent()).toContain((await requestId(refusal))!)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
  })

  it('keeps working in a tab whose session was replaced by a sign-in in another tab', async () => {
    const other = await ui.context.newPage()
    watchProblems(other, ui.problems)
    await ui.goto(`projects/${SLUG}/audiences`, other)
    await ui.heading('Audiences', other).waitFor() // same browser: already signed in

    // The first tab signs out and in again: a new session (and CSRF token) for the browser.
    await ui.page.getByRole('button', { name: 'Sign out' }).click()
    await ui.signIn('projects')

    const form = other.getByRole('form', { name: 'Create an audience' })
    await form.getByLabel('Name', { exact: true }).fill('Second tab')
    await form.getByRole('button', { name: 'Create audience' }).click()
    const created = other.getByRole('row').filter({ hasText: 'Second tab' })
    const failed = form.getByRole('alert')
    await created.or(failed).first().waitFor()
    expect(await failed.allTextContents()).toEqual([])
    await created.waitFor()

    // Signing out there ends the browser's session, although that tab's token is stale again.
    await ui.page.getByRole('button', { name: 'Sign out' }).click()
    await ui.signIn('projects')
    await other.getByRole('button', { name: 'Sign out' }).click()
    await other.getByLabel('Admin key').waitFor()
    await ui.page.reload()
    await ui.page.getByLabel('Admin key').waitFor()
    await other.close()
    await ui.signIn('projects')
  })

  it("labels analytics' UTC days with their own date in a browser west of UTC", async () => {
    await ui.goto(`analytics?project=${SLUG}&range=7d&interval=day`)
    await ui.heading('Analytics').waitFor()
    const chart = ui.page.getByRole('img', { name: /Emails per day/ })
    await chart.waitFor()
    // The table gives each bucket's UTC day; the chart must name the same day for that point.
    await ui.page.getByText('Show as a table').click()
    const table = ui.page.getByRole('table', { name: 'Emails per day' })
    const firstDay = (await table.getByRole('rowheader').first().textContent())!.trim()
    expect(firstDay).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    const plot = chart.locator('.u-over')
    const box = (await plot.boundingBox())!
    await ui.page.mouse.move(box.x + 2, box.y + box.height / 2) // the first (oldest) bucket
    const legendX = chart.locator('.u-legend .u-series').first().locator('.u-value')
    await expect.poll(async () => (await legendX.textContent())?.trim()).toContain(firstDay)
  })

  it('pages on through a project with more contacts than one page holds', async () => {
    const people = Array.from({ length: 130 }, (_, i) => ({
      email: `p${String(i).padStart(3, '0')}@example.com`,
    }))
    const imported = await client.post(`/v1/admin/projects/${SLUG}/contacts/import`, client.admin, people)
    expect(imported.body).toEqual({ created: 130, updated: 0 })
    await ui.goto(`projects/${SLUG}/contacts`)
    await ui.heading('Contacts').waitFor()
    const rows = ui.page.getByRole('table', { name: 'Contacts' }).getByRole('row')
    await rows.filter({ hasText: 'p129@example.com' }).waitFor() // newest first
    await ui.page.getByRole('button', { name: 'Load more' }).click()
    await rows.filter({ hasText: 'p000@example.com' }).waitFor() // the oldest, on a later page
    expect(await rows.count()).toBe(131) // header + every contact once
    expect(await ui.page.getByRole('button', { name: 'Load more' }).count()).toBe(0)
    // An action on a later page keeps the pages shown, with the row's new state.
    const oldest = rows.filter({ hasText: 'p000@example.com' })
    await oldest.getByRole('button', { name: 'Unsubscribe' }).click()
    await oldest.getByText('unsubscribed', { exact: true }).waitFor()
    expect(await rows.count()).toBe(131)
  })

  it("shows an audience's own contacts when its contact count is followed", async () => {
    const vip = await client.post(`/v1/admin/projects/${SLUG}/audiences`, client.admin, { name: 'VIP' })
    const added = await client.post(`/v1/admin/projects/${SLUG}/contacts`, client.admin, {
      email: 'vip@example.com',
      audienceIds: [vip.body.id],
    })
    expect(added.status).toBeLessThan(300)
    await ui.goto(`projects/${SLUG}/audiences`)
    await ui.page.getByRole('row').filter({ hasText: 'VIP' }).getByRole('link', { name: '1' }).click()
    await ui.heading('Contacts').waitFor()
    const rows = ui.page.getByRole('table', { name: 'Contacts' }).getByRole('row')
    await rows.filter({ hasText: 'vip@example.com' }).waitFor()
    expect(await rows.count()).toBe(2) // header + the audience's one contact, not every contact
    await expect
      .poll(() => ui.page.getByRole('combobox', { name: 'Audience' }).inputValue())
      .toBe(vip.body.id)
  })

  ui.itShowsNoProblems()
})
