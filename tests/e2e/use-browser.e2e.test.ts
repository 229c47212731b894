import { afterAll, describe, expect, it } from 'vitest'
import { useBrowser } from './browser.js'

// No gateway: what the helper gives on its own. The page exists only once its beforeAll has run,
// and a file that reads it too early is told so rather than handed `undefined`.
let gatewayUrl = ''
const early: string[] = []
const ui = useBrowser(() => gatewayUrl)
try {
  void ui.page
} catch (e) {
  early.push((e as Error).message)
}
// Registered after useBrowser, so vitest runs it before useBrowser's afterAll: the page is still open.
afterAll(async () => {
  expect(ui.page.isClosed()).toBe(false)
})

describe('useBrowser', () => {
  it('refuses the page before its beforeAll, by saying why', () => {
    expect(early).toEqual(['useBrowser: no page yet (it is opened in a beforeAll)'])
  })

  it("collects the page's script errors in problems", async () => {
    await ui.page.setContent(`<script>setTimeout(() => { throw new Error('boom') })</script>`)
    await expect.poll(() => ui.problems).toEqual(['pageerror: boom'])
    ui.problems.length = 0
  })

  it('records a dialog and dismisses it, so the page goes on', async () => {
    await ui.page.setContent('<p>page</p>')
    // alert() blocks the page's script until the dialog is closed.
    // The page's window (the tests' TypeScript has no DOM types).
    const after = await ui.page.evaluate(() => {
      ;(globalThis as unknown as { alert(message: string): void }).alert('hello')
      return 'went on'
    })
    expect(after).toBe('went on')
    expect(ui.problems).toEqual(['dialog: hello'])
    ui.problems.length = 0
  })

  it('a page asked for without a gateway fails with a message that says so', async () => {
    await expect(ui.goto('projects')).rejects.toThrow(/the gateway is not running/)
    gatewayUrl = 'http://127.0.0.1:9'
    await expect(ui.goto('projects')).rejects.toThrow(/127\.0\.0\.1:9\/dashboard\/projects/)
  })

  ui.itShowsNoProblems()
})
