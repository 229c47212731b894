import { waitFor } from '@mailer/testing'
import { describe, expect, it } from 'vitest'
import { availableServices } from '../support/services.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'
import { verifyWebhook } from '../support/webhooks.js'
import { ensureDashboardBuilt, screenshot, screenshotAllLooks, useBrowser } from './browser.js'

// The operator's path through the dashboard in a real Chromium, against every service: sign in,
// create a project and a key, add a domain, watch an email sent with that key reach `delivered`,
// read it, resend, reschedule and cancel, create a webhook and see its deliveries, add and remove a
// suppression, sign out. Templates, broadcasts and analytics: dashboard-content.e2e.test.ts.
const { stack, client, receiver } = useStack(
  availableServices().filter((s) => s !== 'dispatcher'),
  {
    testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '500' },
    dispatcher: true,
    receiver: true,
    before: () => ensureDashboardBuilt(),
    timeout: 240_000,
  },
)
const ui = useBrowser(() => stack.gatewayUrl)

const SLUG = 'e2e-shop'
const DOMAIN = 'shop.e2e.test'
let liveKey = ''

// Generous: the machine running the suite may be loaded; waits inside are bounded by conditions.
describe('the dashboard, end to end', { timeout: 120_000 }, () => {
  it('signs in with the admin key (and refuses a wrong one)', async () => {
    await ui.goto('')
    await ui.page.getByLabel('Admin key').fill('not-the-key')
    await ui.page.getByRole('button', { name: 'Sign in' }).click()
    await ui.page.getByRole('alert').filter({ hasText: 'Wrong admin key' }).waitFor()
    await screenshot(ui.page, 'sign-in')

    await ui.page.getByLabel('Admin key').fill(ADMIN_KEY)
    await ui.page.getByRole('button', { name: 'Sign in' }).click()
    await ui.heading('Projects').waitFor()
    // Keyboard users can jump past the navigation: the skip link comes first in the tab order.
    const firstTabbable = `[...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
      .find((e) => e.tabIndex >= 0).textContent`
    expect(await ui.page.evaluate(firstTabbable)).toBe('Skip to content')
    const skip = ui.page.getByRole('link', { name: 'Skip to content' })
    await skip.focus()
    expect(await skip.boundingBox()).toMatchObject({ y: expect.any(Number) })
    expect((await skip.boundingBox())!.y).toBeGreaterThanOrEqual(0) // shown while focused
    await ui.page.keyboard.press('Enter')
    expect(await ui.page.evaluate('document.activeElement.id')).toBe('main')
  })

  it('creates a project and a live key, shown once', async () => {
    await ui.page.getByRole('button', { name: 'New project' }).click()
    const form = ui.page.getByRole('form', { name: 'Create a project' })
    await form.getByLabel('Slug').fill(SLUG)
    await form.getByLabel('Name', { exact: true }).fill('E2E Shop')
    await form.getByRole('button', { name: 'Create project' }).click()
    await ui.heading('E2E Shop').waitFor()

    const keyForm = ui.page.getByRole('form', { name: 'Create an API key' })
    await keyForm.getByLabel('Key name').fill('checkout')
    await keyForm.getByRole('button', { name: 'Create key' }).click()
    liveKey = (await ui.page.getByTestId('secret-value').textContent()) ?? ''
    expect(liveKey).toMatch(/^fs_live_[A-Za-z0-9]{32}$/)
    await ui.page.getByRole('row').filter({ hasText: 'checkout' }).getByText('active').waitFor()
    await screenshotAllLooks(ui.page, 'project')
    await ui.page.getByRole('button', { name: 'Done' }).click()
    expect(await ui.page.getByTestId('secret-value').count()).toBe(0)
    // The key works: the API knows it.
    const me = await client.get('/v1/me', liveKey)
    expect(me.body.project.slug).toBe(SLUG)
  })

  it('adds a sending domain and shows its DNS records', async () => {
    await ui.nav('Domains').click()
    await ui.heading('Domains').waitFor()
    const form = ui.page.getByRole('form', { name: 'Add a domain' })
    expect(await form.getByLabel('Project').inputValue()).toBe(SLUG) // the project just worked on
    await form.getByLabel('Domain').fill(DOMAIN)
    await form.getByRole('button', { name: 'Add domain' }).click()
    const card = ui.page.getByRole('region', { name: DOMAIN })
    await card.getByText('verified').first().waitFor()
    expect(await card.getByRole('row').count()).toBe(4) // header + DKIM, SPF, DMARC
    await screenshot(ui.page, 'domains')
  })

  it('shows an email sent with the key reach `delivered`, then its timeline, preview and parts', async () => {
    const sent = await client.post('/v1/emails', liveKey, {
      from: `Shop <hello@${DOMAIN}>`,
      to: 'ann@example.com',
      subject: 'Your order #1001',
      html: '<h1>Thanks for your order</h1><p>It ships today.</p>',
      text: 'Thanks for your order. It ships today.',
      tags: { order: '1001' },
      headers: { 'X-Order': '1001' },
      attachments: [{ filename: 'invoice.txt', content: Buffer.from('invoice 1001').toString('base64') }],
    })
    expect(sent.status).toBe(202)

    await ui.nav('Emails').click()
    await ui.heading('Emails').waitFor()
    const filters = ui.page.getByRole('form', { name: 'Filter emails' })
    await filters.getByLabel('Project').selectOption(SLUG)
    await filters.getByRole('button', { name: 'Apply filters' }).click()
    const row = ui.page.getByTestId('email-row').filter({ hasText: 'Your order #1001' })
    // The list refreshes by itself; no reload.
    await row.getByText('delivered', { exact: true }).waitFor({ timeout: 45_000 })
    await screenshotAllLooks(ui.page, 'emails')

    await row.getByRole('link', { name: 'Your order #1001' }).click()
    await ui.heading('Your order #1001').waitFor()
    const timeline = ui.page.getByTestId('timeline')
    await timeline.getByText('email.delivered').waitFor()
    expect(await timeline.textContent()).toContain('email.queued')
    expect(await timeline.textContent()).toContain('email.sent')
    await ui.page.getByRole('row').filter({ hasText: 'ann@example.com' }).getByText('delivered').waitFor()

    const preview = ui.page.getByTestId('email-preview')
    expect(await preview.getAttribute('sandbox')).toBe('')
    await ui.page
      .frameLocator('[data-testid="email-preview"]')
      .getByRole('heading', { name: 'Thanks for your order' })
      .waitFor()
    await screenshotAllLooks(ui.page, 'email')

    await ui.page.getByRole('tab', { name: 'Text' }).click()
    await ui.page.getByText('Thanks for your order. It ships today.').waitFor()
    await ui.page.getByRole('tab', { name: 'Text' }).press('ArrowRight') // keyboard: next tab
    await ui.page
      .getByRole('cell', { name: 'X-Order' })
      .or(ui.page.getByRole('rowheader', { name: 'X-Order' }))
      .waitFor()
    await ui.page.getByRole('tab', { name: 'Attachments' }).click()
    await ui.page.getByRole('cell', { name: 'invoice.txt' }).waitFor()
  })

  it('resends an email, and reschedules then cancels a scheduled one', async () => {
    await ui.page.getByRole('button', { name: 'Resend' }).click()
    await ui.page
      .getByRole('dialog', { name: 'Send this email again?' })
      .getByRole('button', { name: 'Resend' })
      .click()
    await ui.page.getByText(/^resent_from: email_/).waitFor() // the new email's page
    await ui.heading('Your order #1001').waitFor()

    const later = new Date(Date.now() + 3600_000)
    const sent = await client.post('/v1/emails', liveKey, {
      from: `hello@${DOMAIN}`,
      to: 'carol@example.com',
      subject: 'Reminder',
      text: 'Later',
      scheduledAt: later.toISOString(),
    })
    expect(sent.body.status).toBe('scheduled')
    await ui.nav('Emails').click()
    await ui.page.getByTestId('email-row').filter({ hasText: 'Reminder' }).getByRole('link').click()
    await ui.heading('Reminder').waitFor()
    const pad = (n: number) => String(n).padStart(2, '0')
    const t = new Date(Date.now() + 2 * 3600_000)
    const local = `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`
    await ui.page.getByLabel('Send at').fill(local)
    await ui.page.getByRole('button', { name: 'Reschedule' }).click()
    await ui.page.getByTestId('timeline').getByText('email.scheduled').nth(1).waitFor()
    const record = await client.get(`/v1/emails/${sent.body.id}`, liveKey)
    expect(new Date(record.body.scheduledAt).getTime()).toBeGreaterThan(later.getTime())

    await ui.page.getByRole('button', { name: 'Cancel email' }).click()
    await ui.page
      .getByRole('dialog', { name: 'Cancel this email?' })
      .getByRole('button', { name: 'Cancel email' })
      .click()
    await ui.page.getByTestId('timeline').getByText('email.canceled').waitFor()
    expect((await client.get(`/v1/emails/${sent.body.id}`, liveKey)).body.status).toBe('canceled')
  })

  it('creates a webhook (secret shown once) and shows its deliveries: a test event and a real one', async () => {
    await ui.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click()
    await ui.heading('Webhooks').waitFor()
    await ui.page.getByLabel('Endpoint URL').fill(receiver.url('/mailer'))
    await ui.page.getByRole('button', { name: 'Create webhook' }).click()
    const secret = (await ui.page.getByTestId('secret-value').textContent()) ?? ''
    expect(secret).toMatch(/^whsec_/)
    await ui.page.getByRole('button', { name: 'Done' }).click()
    await screenshot(ui.page, 'webhooks')

    await ui.page.getByRole('link', { name: receiver.url('/mailer') }).click()
    await ui.heading('Webhook').waitFor()
    await ui.page.getByRole('button', { name: 'Send test event' }).click()
    await ui.page
      .getByTestId('delivery-row')
      .filter({ hasText: 'email.delivered' })
      .getByText('success')
      .waitFor()
    const got = await waitFor(() => receiver.requests.find((r) => r.body?.data?.test === true), {
      what: 'test delivery',
    })
    expect(verifyWebhook(got.headers['service-signature'] as string, secret, got.raw)).toBe(true)

    // Manual retry: the same delivery is attempted again.
    const testRow = ui.page.getByTestId('delivery-row').filter({ hasText: 'email.delivered' })
    await testRow.getByRole('button', { name: 'Retry' }).click()
    await testRow.getByRole('cell', { name: '2', exact: true }).waitFor()
    await waitFor(() => receiver.requests.filter((r) => r.body?.data?.test === true).length === 2, {
      what: 'retry',
    })

    // Rotation shows the new secret once; later deliveries are signed with it.
    await ui.page.getByRole('button', { name: 'Rotate secret' }).click()
    await ui.page
      .getByRole('dialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click()
    const rotated = (await ui.page.getByTestId('secret-value').textContent()) ?? ''
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    await ui.page.getByRole('button', { name: 'Done' }).click()

    // A real event: another email of the project, delivered, fires email.sent/delivered.
    const sent = await client.post('/v1/emails', liveKey, {
      from: `hello@${DOMAIN}`,
      to: 'bob@example.com',
      subject: 'Shipped',
      text: 'On its way',
    })
    expect(sent.status).toBe(202)
    await waitFor(
      () =>
        receiver.requests.some(
          (r) => r.body?.data?.emailId === sent.body.id && r.body.type === 'email.delivered',
        ),
      {
        timeoutMs: 45_000,
        what: 'real delivery',
      },
    )
    await ui.page.getByTestId('delivery-row').filter({ hasText: 'email.sent' }).getByText('success').waitFor()

    await ui.page.getByRole('switch', { name: 'Disable' }).click()
    await ui.page.getByRole('switch', { name: 'Enable' }).waitFor()
    await screenshotAllLooks(ui.page, 'webhook')
    await ui.page.getByRole('switch', { name: 'Enable' }).click()
    await ui.page.getByRole('switch', { name: 'Disable' }).waitFor()
  })

  it('adds and removes a suppression; an email waiting for the address is not sent to it', async () => {
    // Accepted before the address is listed, due only after.
    const waiting = await client.post('/v1/emails', liveKey, {
      from: `hello@${DOMAIN}`,
      to: 'blocked@example.com',
      subject: 'Held back',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3600_000).toISOString(),
    })
    expect(waiting.status).toBe(202)
    await ui.nav('Suppressions').click()
    await ui.heading('Suppressions').waitFor()
    await ui.page.getByRole('textbox', { name: 'Address', exact: true }).fill('Blocked@Example.com')
    await ui.page.getByRole('button', { name: 'Suppress address' }).click()
    const row = ui.page.getByTestId('suppression-row').filter({ hasText: 'blocked@example.com' })
    await row.waitFor()
    expect((await client.get('/v1/admin/suppressions?q=blocked', client.admin)).body.data).toHaveLength(1)
    await screenshot(ui.page, 'suppressions')

    // Now due: the dispatcher reads the list again and does not send it.
    const due = await client.patch(`/v1/emails/${waiting.body.id}`, liveKey, {
      scheduledAt: new Date(Date.now() + 1500).toISOString(),
    })
    expect(due.status).toBe(200)
    await ui.nav('Emails').click()
    await ui.heading('Emails').waitFor()
    const emailRow = ui.page.getByTestId('email-row').filter({ hasText: 'Held back' })
    await emailRow.getByText('rejected', { exact: true }).waitFor({ timeout: 45_000 })
    await emailRow.getByRole('link', { name: 'Held back' }).click()
    await ui.heading('Held back').waitFor()
    await ui.page.getByTestId('timeline').getByText('not sent: on the suppression list (manual)').waitFor()
    await ui.page.getByRole('row').filter({ hasText: 'blocked@example.com' }).getByText('rejected').waitFor()

    await ui.nav('Suppressions').click()
    await ui.heading('Suppressions').waitFor()
    await row.waitFor()

    await row.getByRole('button', { name: 'Remove' }).click()
    const dialog = ui.page.getByRole('dialog', { name: 'Remove blocked@example.com?' })
    await dialog.getByRole('button', { name: 'Remove' }).click()
    await row.waitFor({ state: 'detached' })
    expect((await client.get('/v1/admin/suppressions?q=blocked', client.admin)).body.data).toEqual([])
  })

  it('signs out: the session is gone, also after a reload', async () => {
    await ui.page.getByRole('button', { name: 'Sign out' }).click()
    await ui.page.getByLabel('Admin key').waitFor()
    await ui.page.reload()
    await ui.page.getByLabel('Admin key').waitFor()
    expect(ui.problems).toEqual([])
  })
})
