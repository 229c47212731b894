/**
 * Calls `tick` every `everyMs` while `visible()` says the tab is shown, but never while the
 * previous call is still running: a tick that comes meanwhile is skipped. Against a slow server
 * (GET /v1/admin/stats once took longer than its 10 s poll) a page kept one request in flight,
 * not a new one every interval piling onto it. Returns the function that stops it.
 */
export function poll(everyMs: number, tick: () => Promise<unknown>, visible: () => boolean): () => void {
  let busy = false
  const t = setInterval(() => {
    if (busy || !visible()) return
    busy = true
    tick()
      .catch(() => undefined)
      .finally(() => {
        busy = false
      })
  }, everyMs)
  return () => clearInterval(t)
}
