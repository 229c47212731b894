import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { availableServices } from '../support/services.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, screenshot, screenshotAllLooks, useBrowser } from './browser.js'

// The content side of the dashboard in a real Chromium against every service: a template edited,
// previewed and test-sent; contacts in an audience and a broadcast whose progress fills in by
// polling; analytics charts over emails that were really delivered.
const { stack, client, relay } = useStack(
  availableServices().filter((s) => s !== 'dispatcher'),
  {
    dispatcher: true,
    before: () => ensureDashboardBuilt(),
    timeout: 240_000,
  },
)
const ui = useBrowser(() => stack.gatewayUrl)

const SLUG = 'e2e-news'
const DOMAIN = 'news.e2e.test'

beforeAll(async () => {
  const p = await projectWithDomain(client, SLUG, DOMAIN, { name: 'E2E News' })
  const sent = await client.post('/v1/emails', p.live, {
    from: p.from,
    to: 'ann@example.com',
    subject: 'Hello',
    text: 'x',
    tags: { plan: 'pro' },
  })
  await waitFor(
    async () => (await client.get(`/v1/emails/${sent.body.id}`, p.live)).body.status === 'delivered',
    {
      timeoutMs: 45_000,
      what: 'first email delivered',
    },
  )
  await ui.signIn(`projects/${SLUG}`, 'E2E News') // a deep link survives the sign-in
}, 240_000)

// Generous: the machine running the suite may be loaded; waits inside are bounded by conditions.
describe('templates, broadcasts and analytics in the dashboard', { timeout: 120_000 }, () => {
  it('creates a template, previews it and test-sends it; runs a broadcast with live progress', async () => {
    await ui.nav('Templates').click()
    await ui.heading('Templates').waitFor()
    await ui.page.getByRole('button', { name: 'New template' }).click()
    const form = ui.page.getByRole('form', { name: 'Create a template' })
    await form.getByLabel('Name', { exact: true }).fill('welcome')
    await form.getByLabel('Subject').fill('Welcome {{name}}')
    await form.getByLabel('HTML').fill('<h2>Hello {{name}}</h2>')
    await form.getByRole('button', { name: 'Create template' }).click()
    await ui.heading('Template welcome').waitFor()
    await ui.page
      .getByRole('form', { name: 'Render preview' })
      .getByLabel('Data (JSON)')
      .fill('{ "name": "Ann" }')
    await ui.page.getByRole('button', { name: 'Render', exact: true }).click()
    await ui.page
      .frameLocator('iframe[title="Rendered template"]')
      .getByRole('heading', { name: 'Hello Ann' })
      .waitFor()
    const send = ui.page.getByRole('form', { name: 'Test send' })
    await send.getByLabel('To').fill('tester@example.com')
    await send.getByLabel('From').fill(`hello@${DOMAIN}`)
    await send.getByLabel('Data (JSON)').fill('{ "name": "Tess" }')
    await send.getByRole('button', { name: 'Send test email' }).click()
    await ui.page.getByRole('link', { name: /^email_/ }).click()
    await ui.heading('Welcome Tess').waitFor()
    await screenshot(ui.page, 'template-test-email')

    await ui.nav('Audiences').click()
    await ui.page.getByLabel('Name', { exact: true }).fill('Newsletter')
    await ui.page.getByRole('button', { name: 'Create audience' }).click()
    await ui.page.getByRole('row').filter({ hasText: 'Newsletter' }).waitFor()
    await ui.nav('Contacts').click()
    const contact = ui.page.getByRole('form', { name: 'Add a contact' })
    await contact.getByLabel('Email').fill('reader@example.com')
    await contact.getByLabel('First name').fill('Rita')
    await contact.getByLabel('Newsletter').check()
    await contact.getByRole('button', { name: 'Save contact' }).click()
    await ui.page.getByRole('row').filter({ hasText: 'reader@example.com' }).waitFor()
    await screenshot(ui.page, 'contacts')

    await ui.nav('Broadcasts').click()
    await ui.page.getByRole('button', { name: 'New broadcast' }).click()
    const draft = ui.page.getByRole('form', { name: 'Create a broadcast draft' })
    await draft.getByLabel('Audience').selectOption({ label: 'Newsletter (1)' })
    await draft.getByLabel('From').fill(`News <news@${DOMAIN}>`)
    await draft.getByLabel('Subject').fill('March news')
    await draft.getByRole('button', { name: 'Save draft' }).click()
    await ui.heading('March news').waitFor()
    await ui.page.getByRole('button', { name: 'Send now' }).click()
    // Polled: the bar fills without a reload.
    await ui.page
      .getByText('1 sent, 0 in progress, 0 failed or skipped of 1 contacts')
      .waitFor({ timeout: 45_000 })
    await ui.page.getByText('sent', { exact: true }).first().waitFor()
    await screenshotAllLooks(ui.page, 'broadcast')
    expect(relay.delivered.some((d) => d.envelopeTo.includes('reader@example.com'))).toBe(true)
  })

  it('draws analytics: emails over time and delivery-time percentiles', async () => {
    await ui.nav('Analytics').click()
    await ui.heading('Analytics').waitFor()
    await ui.page.getByRole('img', { name: /Emails per day/ }).waitFor()
    await ui.page
      .getByRole('img', { name: /Delivery time/ })
      .or(ui.page.getByText('Nothing delivered'))
      .waitFor()
    await screenshotAllLooks(ui.page, 'analytics')

    for (const [link, title] of [
      ['Templates', 'Templates'],
      ['Audiences', 'Audiences'],
      ['Broadcasts', 'Broadcasts'],
    ] as const) {
      await ui.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click()
      await ui.heading(title).waitFor()
      await ui.page.getByRole('table').waitFor()
      await screenshot(ui.page, title.toLowerCase())
    }
  })

  it('lists the project with its email counts, and shows an empty state', async () => {
    await ui.nav('Projects').click()
    await ui.heading('Projects').waitFor()
    await ui.page.getByRole('row').filter({ hasText: SLUG }).waitFor()
    await screenshotAllLooks(ui.page, 'projects')
    await ui.nav('Suppressions').click()
    await ui.page.getByRole('searchbox', { name: 'Search addresses' }).fill('nobody-here')
    await ui.page.getByRole('button', { name: 'Search', exact: true }).click()
    await ui.page.getByText('No suppressed address matches.').waitFor()
  })

  ui.itShowsNoProblems('shows no script error, CSP violation or dialog on any page')
})
