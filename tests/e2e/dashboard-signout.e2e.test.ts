import { start } from '@mailer/gateway/app'
import { loadEnv } from '@mailer/gateway/env'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TcpProxy } from '../support/infra.js'
import { useStack } from '../support/use-stack.js'
import { ensureDashboardBuilt, useBrowser } from './browser.js'

// A sign-out the gateway could not store (PostgreSQL unreachable from it) changed nothing: the
// session goes on. The page must say so and stay signed in, not show the sign-in form as if the
// session had ended while the cookie still opens the dashboard.
const { te, stack } = useStack(['auth'], {
  before: () => ensureDashboardBuilt(),
  after: () => pgProxy?.close(),
  timeout: 240_000,
})
let gateway: Awaited<ReturnType<typeof start>>
let pgProxy: TcpProxy

beforeAll(async () => {
  // The gateway's own path to PostgreSQL can be cut; the auth service keeps its own.
  pgProxy = await TcpProxy.start(Number(new URL(te.databaseUrl).port || 5432))
  const url = new URL(te.databaseUrl)
  url.host = `127.0.0.1:${pgProxy.port}`
  gateway = await start(loadEnv(stack.env({ DATABASE_URL: url.toString() })))
}, 240_000)

afterAll(async () => {
  await gateway?.stop()
}, 120_000)

// After the gateway's hooks: the browser is launched once the gateway is up and closed before it
// stops. This file asserts no console lines, so the page is not watched (nor its dialogs answered).
const ui = useBrowser(() => gateway.url, { watch: false })

describe('signing out of the dashboard', { timeout: 120_000 }, () => {
  it('says so and stays signed in when the sign-out could not be stored; signs out once it can', async () => {
    await ui.signIn('projects')
    const heading = ui.heading('Projects')

    pgProxy.cut()
    const answer = ui.page.waitForResponse(
      (r) => r.request().method() === 'DELETE' && new URL(r.url()).pathname === '/dashboard/api/session',
    )
    await ui.page.getByRole('button', { name: 'Sign out' }).click()
    expect((await answer).status()).toBe(503)
    await ui.page.getByText(/Not signed out/).waitFor()
    expect(await ui.page.getByLabel('Admin key').count()).toBe(0)
    expect(await heading.isVisible()).toBe(true)

    pgProxy.restore()
    await ui.page.getByRole('button', { name: 'Sign out' }).click()
    await ui.page.getByLabel('Admin key').waitFor()
    await ui.page.reload()
    await ui.page.getByLabel('Admin key').waitFor()
  })
})
