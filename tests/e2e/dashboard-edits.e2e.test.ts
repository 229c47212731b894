import { beforeAll, describe, expect, it } from 'vitest'
import { sql } from '../support/db.js'
import { email, projectWithDomain } from '../support/emails.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, useBrowser } from './browser.js'

// What an operator typed or was shown stays right while other things happen on the page (a switch
// flipped next to a half-edited form, a key revoked right after it was created), the first visit
// before any session is clean, and pages say what to do rather than fail: an email opened by id
// alone, an old email's content gone, a broadcast with no audience yet.
const { te, stack, client } = useStack(['auth', 'email', 'webhook', 'broadcast', 'gateway'], {
  testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
  before: () => ensureDashboardBuilt(),
  timeout: 240_000,
})
const ui = useBrowser(() => stack.gatewayUrl)
let shop: Awaited<ReturnType<typeof projectWithDomain>>

const SLUG = 'e2e-edits'

beforeAll(async () => {
  shop = await projectWithDomain(client, SLUG)
}, 240_000)

describe('the dashboard keeps what the operator typed and saw right', { timeout: 120_000 }, () => {
  it('opens on the sign-in form without a failed request in the console', async () => {
    // Every console line, "Failed to load resource" included: the session check before sign-in
    // is a request the page makes on every visit, so it must not fail.
    const lines: string[] = []
    const fresh = await ui.context.newPage()
    fresh.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') lines.push(`${m.type()}: ${m.text()}`)
    })
    const check = fresh.waitForResponse((r) => new URL(r.url()).pathname === '/dashboard/api/session')
    await ui.goto('projects', fresh)
    const status = (await check).status()
    await fresh.getByLabel('Admin key').waitFor()
    const before = [...lines]
    // Signed in (for the tests below) before asserting, so they do not depend on this one.
    await fresh.getByLabel('Admin key').fill(ADMIN_KEY)
    await fresh.getByRole('button', { name: 'Sign in' }).click()
    await ui.heading('Projects', fresh).waitFor()
    expect(before).toEqual([])
    expect(status).toBe(200)
    await fresh.close()
  })

  it("keeps a project's unsaved settings when RPC or the project is switched", async () => {
    await ui.open(`projects/${SLUG}`)
    const settings = ui.page.getByRole('form', { name: 'Project settings' })
    await settings.getByLabel('Name', { exact: true }).fill('Renamed, not saved yet')
    await settings.getByLabel('Daily limit').fill('42')

    const rpc = ui.page.getByRole('switch')
    await expect.poll(() => rpc.getAttribute('aria-checked')).toBe('true')
    await rpc.click()
    await expect.poll(() => rpc.getAttribute('aria-checked')).toBe('false')
    await ui.page.getByRole('button', { name: 'Disable project' }).click()
    await ui.page
      .getByRole('dialog', { name: `Disable ${SLUG}?` })
      .getByRole('button', { name: 'Disable project' })
      .click()
    await ui.page.getByRole('button', { name: 'Enable project' }).waitFor()

    expect(await settings.getByLabel('Name', { exact: true }).inputValue()).toBe('Renamed, not saved yet')
    expect(await settings.getByLabel('Daily limit').inputValue()).toBe('42')

    // Saving then stores them, and the fields show what was stored.
    await settings.getByLabel('Name', { exact: true }).fill('  Edited  ')
    await settings.getByRole('button', { name: 'Save changes' }).click()
    await ui.heading('Edited').waitFor()
    expect(await settings.getByLabel('Name', { exact: true }).inputValue()).toBe('Edited')
    const stored = await client.get(`/v1/admin/projects/${SLUG}`, client.admin)
    expect(stored.body).toMatchObject({ name: 'Edited', dailyLimit: 42, rpcEnabled: false, disabled: true })
    await client.patch(`/v1/admin/projects/${SLUG}`, client.admin, { disabled: false })
  })

  it("keeps a webhook's unsaved URL and events when it is disabled or enabled", async () => {
    const hook = await client.post(`/v1/admin/projects/${SLUG}/webhooks`, client.admin, {
      url: 'http://127.0.0.1:9/before',
      events: ['*'],
    })
    expect(hook.status).toBe(201)
    await ui.open(`projects/${SLUG}/webhooks/${hook.body.id}`)
    const edit = ui.page.getByRole('form', { name: 'Edit webhook' })
    await edit.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/after')
    await edit.getByLabel('Every event (*)').uncheck()
    await edit.getByLabel('email.bounced').check()

    const toggle = ui.page.getByRole('switch')
    await toggle.click()
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false')
    await toggle.click()
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true')

    expect(await edit.getByLabel('Endpoint URL').inputValue()).toBe('http://127.0.0.1:9/after')
    expect(await edit.getByLabel('email.bounced').isChecked()).toBe(true)
    await edit.getByRole('button', { name: 'Save changes' }).click()
    await ui.page.getByText('Webhook saved').waitFor()
    const list = await client.get(`/v1/admin/projects/${SLUG}/webhooks`, client.admin)
    expect(list.body.data[0]).toMatchObject({ url: 'http://127.0.0.1:9/after', events: ['email.bounced'] })
  })

  it('stops showing a new key once it is revoked', async () => {
    await ui.open(`projects/${SLUG}`)
    const form = ui.page.getByRole('form', { name: 'Create an API key' })
    await form.getByLabel('Key name').fill('Short-lived')
    await form.getByRole('button', { name: 'Create key' }).click()
    const secret = ui.page.getByTestId('secret-value')
    await secret.waitFor()
    expect(await secret.textContent()).toMatch(/^fs_live_/)

    const row = ui.page.getByRole('row').filter({ hasText: 'Short-lived' })
    await row.getByRole('button', { name: 'Revoke' }).click()
    await ui.page
      .getByRole('dialog', { name: 'Revoke “Short-lived”?' })
      .getByRole('button', { name: 'Revoke' })
      .click()
    await row.getByText('revoked', { exact: true }).waitFor()
    expect(await secret.count()).toBe(0)
  })

  it('offers Cancel and Reschedule on an email opened by its id alone (no ?project=)', async () => {
    const later = new Date(Date.now() + 86_400_000).toISOString()
    const sent = await client.post('/v1/emails', shop.live, email(shop.from, { scheduledAt: later }))
    expect(sent.status).toBe(202)
    await ui.open(`emails/${sent.body.id}`)
    await ui.page.getByText('scheduled', { exact: true }).first().waitFor()
    await ui.page.getByRole('form', { name: 'Reschedule' }).waitFor()
    await ui.page.getByRole('button', { name: 'Cancel email' }).click()
    await ui.page
      .getByRole('dialog', { name: 'Cancel this email?' })
      .getByRole('button', { name: 'Cancel email' })
      .click()
    await ui.page.getByText('Email canceled').waitFor()
    const stored = await client.get(`/v1/emails/${sent.body.id}`, shop.live)
    expect(stored.body.status).toBe('canceled')
  })

  it("says an old email's content is no longer stored, not that something went wrong", async () => {
    const sent = await client.post('/v1/emails', shop.live, email(shop.from, { subject: 'Old one' }))
    expect(sent.status).toBe(202)
    await sql(te, `UPDATE email_contents SET expires_at = now() - interval '1 day' WHERE email_id = $1`, [
      sent.body.id,
    ])
    await ui.open(`emails/${sent.body.id}`)
    const content = ui.page.getByRole('region', { name: 'Content' })
    await content.getByText('no longer stored').waitFor()
    expect(await content.getByRole('alert').count()).toBe(0)
    expect(await content.getByRole('button', { name: 'Try again' }).count()).toBe(0)
    // Resend is made from the stored content: not offered once it is gone (it failed in its dialog).
    await ui.heading('Old one').waitFor()
    expect(await ui.page.getByRole('button', { name: 'Resend' }).count()).toBe(0)
  })

  it('offers Resend while the content is stored', async () => {
    const sent = await client.post('/v1/emails', shop.live, email(shop.from, { subject: 'Fresh one' }))
    expect(sent.status).toBe(202)
    await ui.open(`emails/${sent.body.id}`)
    await ui.page.getByRole('region', { name: 'Content' }).getByRole('tabpanel').waitFor()
    await ui.page.getByRole('button', { name: 'Resend' }).waitFor()
  })

  it('keeps template edits through a version saved meanwhile, and saves them over it when asked', async () => {
    const tpl = `/v1/admin/projects/${SLUG}/templates`
    expect(
      (await client.post(tpl, client.admin, { name: 'shared', subject: 'Hi', html: '<p>1</p>' })).status,
    ).toBe(201)
    await ui.open(`projects/${SLUG}/templates/shared`)
    const form = ui.page.getByRole('form', { name: 'Edit template' })
    const html = form.getByLabel('HTML')
    await html.fill('<p>Mine</p>')
    // Someone else saves version 2 while these edits are being made.
    const theirs = await client.patch(`${tpl}/shared`, client.admin, { html: '<p>Theirs</p>', version: 1 })
    expect(theirs.body.version).toBe(2)
    await form.getByRole('button', { name: 'Save new version' }).click()
    await form.getByRole('alert').filter({ hasText: 'Version 2 was saved meanwhile' }).waitFor()
    expect(await html.inputValue()).toBe('<p>Mine</p>')
    expect((await client.get(`${tpl}/shared`, client.admin)).body.html).toBe('<p>Theirs</p>')
    // Saving again saves the edits over version 2: it no longer fails until a reload.
    await form.getByRole('button', { name: 'Save new version' }).click()
    await ui.page.getByText('Saved as version 3').waitFor()
    expect((await client.get(`${tpl}/shared`, client.admin)).body.html).toBe('<p>Mine</p>')
  })

  it("keeps the render preview's data through a save, and drops the render of the version before", async () => {
    const tpl = `/v1/admin/projects/${SLUG}/templates`
    const created = await client.post(tpl, client.admin, {
      name: 'greeting',
      subject: 'Hi {{name}}',
      html: '<p>Hello {{name}}</p>',
      variables: [{ name: 'name', example: 'Ann' }],
    })
    expect(created.status).toBe(201)
    await ui.open(`projects/${SLUG}/templates/greeting`)
    const preview = ui.page.getByRole('form', { name: 'Render preview' })
    const data = preview.getByLabel('Data (JSON)')
    await data.fill('{ "name": "Zoe" }')
    await preview.getByRole('button', { name: 'Render' }).click()
    await ui.page.getByText('Hi Zoe').waitFor()
    const form = ui.page.getByRole('form', { name: 'Edit template' })
    await form.getByLabel('Subject').fill('Hello there {{name}}')
    await form.getByRole('button', { name: 'Save new version' }).click()
    await ui.page.getByText('Saved as version 2').waitFor()
    // The typed data stays (it went back to the examples at every save); the old render goes.
    await ui.page.getByText('Hi Zoe').waitFor({ state: 'detached' })
    expect(await data.inputValue()).toBe('{ "name": "Zoe" }')
    await preview.getByRole('button', { name: 'Render' }).click()
    await ui.page.getByText('Hello there Zoe').waitFor()
  })

  it('says where to go when a broadcast has no audience to go to', async () => {
    await ui.open(`projects/${SLUG}/broadcasts`)
    await ui.page.getByRole('button', { name: 'New broadcast' }).click()
    const form = ui.page.getByRole('form', { name: 'Create a broadcast draft' })
    await form.getByRole('status').filter({ hasText: 'has none yet' }).waitFor()
    await form.getByRole('link', { name: 'create an audience' }).click()
    await ui.heading('Audiences').waitFor()
  })

  ui.itShowsNoProblems()
})
