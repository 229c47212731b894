import type { Page } from '@mailer/client'
import { type Command, Option } from 'commander'
import { action, type Context, countOption, intOption } from '../context.js'
import { Interrupted } from '../exit.js'
import { emailColumns, eventColumns } from './emails.js'

interface TailOpts {
  what: string
  project?: string
  interval: number
  count?: number
  lines: number
}

/** The longest wait Node's timers keep (2^31 - 1 ms): a longer one fires after 1 ms. */
const MAX_INTERVAL_SECONDS = Math.floor((2 ** 31 - 1) / 1000)

/** Ends early, quietly, on abort; its listener goes with it (one per poll would pile up). */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done)
  })

/**
 * Polls a newest-first list and prints what it has not printed yet, oldest first, until
 * `--count` items were printed or Ctrl-C. The first poll prints only the last `--lines` items.
 * Each poll reads one page of 100: a burst of more between two polls shows its newest 100.
 * Ctrl-C aborts the poll in flight as well as the wait: a poll the gateway is slow to answer
 * used to hold the terminal for up to the SDK's 30 s time-out. It ends with 130, as the shell
 * reports a command Ctrl-C ended; a second Ctrl-C falls to Node's default and kills at once.
 */
async function tail<T extends { id: string }>(
  ctx: Context,
  o: TailOpts,
  fetch: (signal: AbortSignal) => Promise<Page<T>>,
  human: (row: T) => string,
) {
  let seen: Set<string> | null = null
  let printed = 0
  const stop = new AbortController()
  const onSigint = () => stop.abort(new Interrupted('interrupted'))
  process.once('SIGINT', onSigint)
  try {
    while (!stop.signal.aborted) {
      const page = await fetch(stop.signal).catch((err: unknown) => {
        // The SDK rethrows the abort as it came; anything else is the poll's own failure.
        throw stop.signal.aborted ? stop.signal.reason : err
      })
      const fresh = page.data.filter((row) => !seen?.has(row.id))
      const show = seen === null ? fresh.slice(0, o.lines) : fresh
      for (const row of show.reverse()) {
        ctx.out.line(row, human(row))
        if (o.count !== undefined && ++printed >= o.count) return
      }
      // Said on stderr so that stdout stays the items alone (and scripts know polling has begun).
      if (seen === null) process.stderr.write(`following ${o.what}; Ctrl-C to stop\n`)
      // The current page is all that can reappear: keep only its ids.
      seen = new Set(page.data.map((row) => row.id))
      await sleep(o.interval * 1000, stop.signal)
    }
    throw stop.signal.reason
  } finally {
    process.off('SIGINT', onSigint)
  }
}

const line =
  <T>(columns: [string, (row: T) => unknown][]) =>
  (row: T) =>
    columns
      .map(([, f]) => {
        const v = f(row)
        return Array.isArray(v) ? v.join(',') : String(v ?? '-')
      })
      .join('  ')

export function tailCommand(program: Command): void {
  program
    .command('tail')
    .description('Print new emails or events as they come, until Ctrl-C or --count')
    .addArgument(program.createArgument('<what>', 'emails or events').choices(['emails', 'events']))
    .option('--project <slug>', 'through the admin mirror (admin key); else the project key')
    .option(
      '--interval <seconds>',
      'seconds between polls',
      countOption('--interval', MAX_INTERVAL_SECONDS),
      2,
    )
    .option('--count <n>', 'exit after printing n items', countOption('--count'))
    .addOption(
      new Option('-n, --lines <n>', 'items to show from before the start')
        .argParser(intOption('--lines'))
        .default(10),
    )
    .action(
      action(async (ctx, what: 'emails' | 'events', o: TailOpts) => {
        const scope = ctx.scope(o.project)
        o.what = what
        if (what === 'emails')
          await tail(ctx, o, (signal) => scope.emails.list({ limit: 100 }, { signal }), line(emailColumns))
        else await tail(ctx, o, (signal) => scope.events.list({ limit: 100 }, { signal }), line(eventColumns))
      }),
    )
}
