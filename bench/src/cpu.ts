import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_SECOND = 100

/** user + system CPU ticks of a process, from /proc/<pid>/stat; 0 once it is gone. */
function ticks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(f[11]) + Number(f[12])
  } catch {
    return 0
  }
}

/** The pids whose parent is `ppid` (PostgreSQL's backends under its postmaster). */
function children(ppid: number): number[] {
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(d))
    } catch {
      /* gone */
    }
  }
  return out
}

/**
 * CPU seconds used by named groups of processes between `start()` and `stop()`, so the report can
 * say where a phase's CPU went (per email) even on a machine that others are loading too.
 */
export class CpuMeter {
  private before = new Map<number, number>()

  constructor(private readonly groups: () => Map<string, number[]>) {}

  static postgresPids(postmasterPid: number | null): number[] {
    return postmasterPid ? [postmasterPid, ...children(postmasterPid)] : []
  }

  start(): void {
    this.before = new Map()
    for (const pids of this.groups().values()) for (const p of pids) this.before.set(p, ticks(p))
  }

  /**
   * CPU seconds per group since `start()`, per process: one that started since counts whole; one
   * that exited since is lost (a PostgreSQL backend whose connection closed), so a group's figure
   * is a lower bound when its processes come and go.
   */
  stop(): Map<string, number> {
    const out = new Map<string, number>()
    for (const [name, pids] of this.groups()) {
      const t = pids.reduce((n, p) => n + Math.max(0, ticks(p) - (this.before.get(p) ?? 0)), 0)
      out.set(name, t / TICKS_PER_SECOND)
    }
    return out
  }
}
