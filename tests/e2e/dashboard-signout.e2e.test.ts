import { start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TcpProxy } from '../support/infra.js'
import { ADMIN_KEY } from '../support/stack.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, launchBrowser } from './browser.js'

// A sign-out the gateway could not store (PostgreSQL unreachable from it) changed nothing: the
// session goes on. The page must say so and stay signed in, not show the sign-in form as if the
// session had ended while the cookie still opens the dashboard.
const { te, stack } = useStack(['auth'], {
  before: () => ensureDashboardBuilt(),
  after: () => pgProxy?.close(),
  timeout: 240_000,
})
let browser: Awaited<ReturnType<typeof launchBrowser>>
let gateway: Awaited<ReturnType<typeof start>>
let pgProxy: TcpProxy
let page: Page

beforeAll(async () => {
  // The gateway's own path to PostgreSQL can be cut; the auth service keeps its own.
  pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
  const url = new URL(te.databaseUrl)
  url.host = `127.0.0.1:${pgProxy.port}`
  gateway = await start(loadEnv(stack.env({ DATABASE_URL: url.toString() })))
  browser = await launchBrowser()
  page = await browser.context.newPage()
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await gateway?.stop()
}, 120_000)

describe('signing out of the dashboard', { timeout: 120_000 }, () => {
  it('says so and stays signed in when the sign-out could not be stored; signs out once it can', async () => {
    await page.goto(`${gateway.url}/dashboard/projects`)
    await page.getByLabel('Admin key').fill(ADMIN_KEY)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const heading = page.getByRole('heading', { level: 1, name: 'Projects', exact: true })
    await heading.waitFor()

    pgProxy.cut()
    const answer = page.waitForResponse(
      (r) => r.request().method() === 'DELETE' && new URL(r.url()).pathname === '/dashboard/api/session',
    )
    await page.getByRole('button', { name: 'Sign out' }).click()
    expect((await answer).status()).toBe(503)
    await page.getByText(/Not signed out/).waitFor()
    expect(await page.getByLabel('Admin key').count()).toBe(0)
    expect(await heading.isVisible()).toBe(true)

    pgProxy.restore()
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Admin key').waitFor()
    await page.reload()
    await page.getByLabel('Admin key').waitFor()
  })
})
