/**
 * How long the accept path works on one request's sends before it lets other work run. A batch's
 * 100 items were prepared back to back: 100 renders of a heavy template held the email service
 * (every project's sends) for 100 s. Ordinary batches take a few ms and never yield.
 */
export const SLICE_MS = 10

/**
 * `fn` over `items` one at a time, in order, letting the event loop run other work (other
 * requests, replies from the bus) each time this has held it for `sliceMs` since it last did.
 */
export async function mapInTurn<T, R>(
  items: readonly T[],
  fn: (item: T) => Promise<R>,
  sliceMs = SLICE_MS,
): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let since = performance.now()
  for (let i = 0; i < items.length; i++) {
    out[i] = await fn(items[i]!)
    if (i < items.length - 1 && performance.now() - since >= sliceMs) {
      // setImmediate, not a resolved promise: it runs after pending I/O, so other requests get in.
      await new Promise<void>((resolve) => setImmediate(resolve))
      since = performance.now()
    }
  }
  return out
}
