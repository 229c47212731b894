import { waitFor } from '@mailer/testing'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { availableServices } from '../support/services.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'
import {
  ensureDashboardBuilt,
  launchBrowser,
  screenshot,
  screenshotAllLooks,
  watchProblems,
} from './browser.js'

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
let browser: Awaited<ReturnType<typeof launchBrowser>>
let page: Page
const problems: string[] = []

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

  browser = await launchBrowser()
  page = await browser.context.newPage()
  watchProblems(page, problems)
  await page.goto(`${stack.gatewayUrl}/dashboard/projects/${SLUG}`)
  await page.getByLabel('Admin key').fill(ADMIN_KEY)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await heading('E2E News').waitFor() // a deep link survives the sign-in
}, 240_000)

afterAll(async () => {
  await browser?.close()
}, 120_000)

const nav = (name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true })
const heading = (name: string) => page.getByRole('heading', { level: 1, name, exact: true })

// Generous: the machine running the suite may be loaded; waits inside are bounded by conditions.
describe('templates, broadcasts and analytics in the dashboard', { timeout: 120_000 }, () => {
  it('creates a template, previews it and test-sends it; runs a broadcast with live progress', async () => {
    await nav('Templates').click()
    await heading('Templates').waitFor()
    await page.getByRole('button', { name: 'New template' }).click()
    const form = page.getByRole('form', { name: 'Create a template' })
    await form.getByLabel('Name', { exact: true }).fill('welcome')
    await form.getByLabel('Subject').fill('Welcome {{name}}')
    await form.getByLabel('HTML').fill('<h2>Hello {{name}}</h2>')
    await form.getByRole('button', { name: 'Create template' }).click()
    await heading('Template welcome').waitFor()
    await page
      .getByRole('form', { name: 'Render preview' })
      .getByLabel('Data (JSON)')
      .fill('{ "name": "Ann" }')
    await page.getByRole('button', { name: 'Render', exact: true }).click()
    await page
      .frameLocator('iframe[title="Rendered template"]')
      .getByRole('heading', { name: 'Hello Ann' })
      .waitFor()
    const send = page.getByRole('form', { name: 'Test send' })
    await send.getByLabel('To').fill('tester@example.com')
    await send.getByLabel('From').fill(`hello@${DOMAIN}`)
    await send.getByLabel('Data (JSON)').fill('{ "name": "Tess" }')
    await send.getByRole('button', { name: 'Send test email' }).click()
    await page.getByRole('link', { name: /^email_/ }).click()
    await heading('Welcome Tess').waitFor()
    await screenshot(page, 'template-test-email')

    await nav('Audiences').click()
    await page.getByLabel('Name', { exact: true }).fill('Newsletter')
    await page.getByRole('button', { name: 'Create audience' }).click()
    await page.getByRole('row').filter({ hasText: 'Newsletter' }).waitFor()
    await nav('Contacts').click()
    const contact = page.getByRole('form', { name: 'Add a contact' })
    await contact.getByLabel('Email').fill('reader@example.com')
    await contact.getByLabel('First name').fill('Rita')
    await contact.getByLabel('Newsletter').check()
    await contact.getByRole('button', { name: 'Save contact' }).click()
    await page.getByRole('row').filter({ hasText: 'reader@example.com' }).waitFor()
    await screenshot(page, 'contacts')

    await nav('Broadcasts').click()
    await page.getByRole('button', { name: 'New broadcast' }).click()
    const draft = page.getByRole('form', { name: 'Create a broadcast draft' })
    await draft.getByLabel('Audience').selectOption({ label: 'Newsletter (1)' })
    await draft.getByLabel('From').fill(`News <news@${DOMAIN}>`)
    await draft.getByLabel('Subject').fill('March news')
    await draft.getByRole('button', { name: 'Save draft' }).click()
    await heading('March news').waitFor()
    await page.getByRole('button', { name: 'Send now' }).click()
    // Polled: the bar fills without a reload.
    await page
      .getByText('1 sent, 0 in progress, 0 failed or skipped of 1 contacts')
      .waitFor({ timeout: 45_000 })
    await page.getByText('sent', { exact: true }).first().waitFor()
    await screenshotAllLooks(page, 'broadcast')
    expect(relay.delivered.some((d) => d.envelopeTo.includes('reader@example.com'))).toBe(true)
  })

  it('draws analytics: emails over time and delivery-time percentiles', async () => {
    await nav('Analytics').click()
    await heading('Analytics').waitFor()
    await page.getByRole('img', { name: /Emails per day/ }).waitFor()
    await page
      .getByRole('img', { name: /Delivery time/ })
      .or(page.getByText('Nothing delivered'))
      .waitFor()
    await screenshotAllLooks(page, 'analytics')

    for (const [link, title] of [
      ['Templates', 'Templates'],
      ['Audiences', 'Audiences'],
      ['Broadcasts', 'Broadcasts'],
    ] as const) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click()
      await heading(title).waitFor()
      await page.getByRole('table').waitFor()
      await screenshot(page, title.toLowerCase())
    }
  })

  it('lists the project with its email counts, and shows an empty state', async () => {
    await nav('Projects').click()
    await heading('Projects').waitFor()
    await page.getByRole('row').filter({ hasText: SLUG }).waitFor()
    await screenshotAllLooks(page, 'projects')
    await nav('Suppressions').click()
    await page.getByRole('searchbox', { name: 'Search addresses' }).fill('nobody-here')
    await page.getByRole('button', { name: 'Search', exact: true }).click()
    await page.getByText('No suppressed address matches.').waitFor()
  })

  it('shows no script error, CSP violation or dialog on any page', () => {
    expect(problems).toEqual([])
  })
})
