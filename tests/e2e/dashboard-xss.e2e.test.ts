import { waitFor } from '@mailer/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { projectWithDomain } from '../support/emails.js'
import { availableServices } from '../support/services.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, screenshot, useBrowser } from './browser.js'

// API strings are data, never markup: script payloads in a project name, an email's subject,
// tags, html, text, headers and attachment names, a contact, a template and a webhook's
// response stay inert on every page that shows them. The email's own HTML is rendered only in
// the sandboxed preview frame, where nothing can run.
const IMG = `<img src=x onerror="window.__xss='img';alert('img')">`
const SCRIPT = `<script>window.__xss='script';alert('script')</script>`
const { stack, client, receiver } = useStack(
  availableServices().filter((s) => s !== 'dispatcher'),
  {
    testEnv: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_MS: '500' },
    dispatcher: true,
    receiver: () => ({ status: 200, body: `${IMG}${SCRIPT}` }),
    before: () => ensureDashboardBuilt(),
    timeout: 240_000,
  },
)
// Its own listeners (in the beforeAll), not watchProblems: a dialog a payload opened is dismissed
// as well as recorded, so the page goes on.
const ui = useBrowser(() => stack.gatewayUrl, { watch: false })
const fired: string[] = []

const SVG = `<svg onload="alert('svg')"></svg>`
const SUBJECT = `Invoice ${IMG}${SVG}`
const HTML = `<h1>Invoice ready</h1>${SCRIPT}${IMG}<a href="javascript:alert('href')">pay</a><iframe src="javascript:alert('frame')"></iframe><form action="https://evil.test/"><input name=q><button>go</button></form>`
const SLUG = 'xss-shop'
let emailId = ''
let webhookId = ''

beforeAll(async () => {
  const p = await projectWithDomain(client, SLUG, 'xss.test', { name: `Evil ${IMG}` })
  const sent = await client.post('/v1/emails', p.live, {
    from: p.from,
    to: 'victim@example.com',
    subject: SUBJECT,
    html: HTML,
    text: `Plain ${SCRIPT}`,
    tags: { note: SCRIPT, [`k${SVG}`.slice(0, 64)]: IMG },
    headers: { 'X-Note': IMG },
    attachments: [{ filename: `${IMG}.txt`, content: Buffer.from('x').toString('base64') }],
  })
  expect(sent.status).toBe(202)
  emailId = sent.body.id
  const mirror = `/v1/admin/projects/${SLUG}`
  expect(
    (
      await client.post(`${mirror}/contacts`, client.admin, {
        email: 'c@example.com',
        firstName: IMG,
        lastName: SCRIPT,
      })
    ).status,
  ).toBe(201)
  expect(
    (
      await client.post(`${mirror}/templates`, client.admin, {
        name: 'evil',
        subject: `Hi ${IMG}`,
        html: HTML,
      })
    ).status,
  ).toBe(201)
  const hook = await client.post(`${mirror}/webhooks`, client.admin, { url: receiver.url('/x') })
  webhookId = hook.body.id
  expect((await client.post(`${mirror}/webhooks/${webhookId}/test`, client.admin)).status).toBe(202)
  await waitFor(
    async () => (await client.get(`${mirror}/emails/${emailId}`, client.admin)).body.status === 'delivered',
    {
      timeoutMs: 45_000,
      what: 'delivered',
    },
  )

  ui.page.on('dialog', (d) => {
    fired.push(`dialog: ${d.message()}`)
    void d.dismiss()
  })
  ui.page.on('pageerror', (e) => fired.push(`pageerror: ${e.message}`))
  await ui.signIn('')
}, 240_000)

/** Nothing ran and nothing was injected into the dashboard's own document. */
async function assertInert(where: string): Promise<void> {
  const state = (await ui.page.evaluate(`(() => ({
    xss: window.__xss ?? null,
    injected: document.querySelectorAll('img[src="x"], svg[onload], [onerror], [onload], form[action^="https://evil"], a[href^="javascript:"]').length,
    inlineScripts: document.querySelectorAll('script:not([src])').length,
    foreignScripts: [...document.scripts].filter((s) => !new URL(s.src).pathname.includes('/dashboard/assets/')).length,
    frames: [...document.querySelectorAll('iframe')].map((f) => ({ sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src') })),
  }))()`)) as {
    xss: unknown
    injected: number
    inlineScripts: number
    foreignScripts: number
    frames: { sandbox: string | null; src: string | null }[]
  }
  expect({ where, ...state, frames: undefined }).toEqual({
    where,
    xss: null,
    injected: 0,
    inlineScripts: 0,
    foreignScripts: 0,
    frames: undefined,
  })
  for (const f of state.frames) expect(f, where).toEqual({ sandbox: '', src: null })
  expect(fired, where).toEqual([])
}

const go = async (path: string, title: string | RegExp) => {
  await ui.goto(path)
  await ui.page.getByRole('heading', { level: 1, name: title }).waitFor()
}

describe('script payloads from the API stay inert', { timeout: 120_000 }, () => {
  it('in the project list and the project page', async () => {
    await ui.page.getByRole('link', { name: `Evil ${IMG}` }).waitFor() // shown as text
    await assertInert('projects')
    await go(`projects/${SLUG}`, `Evil ${IMG}`)
    await assertInert('project')
  })

  it('in the email list and on the email page: summary, tags, timeline, text, headers, attachments', async () => {
    await go(`emails?project=${SLUG}`, 'Emails')
    await ui.page.getByRole('link', { name: SUBJECT }).waitFor()
    await ui.page.getByText(`note: ${SCRIPT}`).waitFor()
    await assertInert('emails')

    await ui.page.getByRole('link', { name: SUBJECT }).click()
    await ui.page.getByRole('heading', { level: 1, name: SUBJECT }).waitFor()
    await ui.page.getByTestId('timeline').getByText('email.delivered').waitFor()
    for (const d of await ui.page.locator('details').all()) await d.locator('summary').click() // event data, with the subject
    const frame = ui.page.frameLocator('[data-testid="email-preview"]')
    await frame.getByRole('heading', { name: 'Invoice ready' }).waitFor()
    await screenshot(ui.page, 'xss-email')
    await assertInert('email preview')
    for (const tab of ['Text', 'Headers', 'Attachments']) {
      await ui.page.getByRole('tab', { name: tab }).click()
      await assertInert(`email ${tab}`)
    }
    await ui.page.getByRole('cell', { name: `${IMG}.txt` }).waitFor()
  })

  it('in contacts, a template (editor, history and render preview) and webhook deliveries', async () => {
    await go(`projects/${SLUG}/contacts`, 'Contacts')
    await ui.page.getByText(`${IMG} ${SCRIPT}`).waitFor()
    await assertInert('contacts')

    await go(`projects/${SLUG}/templates/evil`, 'Template evil')
    await ui.page.getByRole('button', { name: 'Render' }).click()
    await ui.page
      .frameLocator('iframe[title="Rendered template"]')
      .getByRole('heading', { name: 'Invoice ready' })
      .waitFor()
    await ui.page.getByText(`Hi ${IMG}`).first().waitFor()
    await assertInert('template')

    await go(`projects/${SLUG}/webhooks/${webhookId}`, 'Webhook')
    await ui.page.getByTestId('delivery-row').first().getByText(`200 ${IMG}${SCRIPT}`).waitFor()
    await assertInert('webhook')
  })
})
