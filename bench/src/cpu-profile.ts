// Reading V8 .cpuprofile files (from `BENCH_PROFILE=1 make bench`), for profile-top.ts and
// flamegraph.ts.
import { readFileSync } from 'node:fs'

export interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}

export interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export const readProfile = (file: string): CpuProfile => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile

/** Self time per node (µs), from the sample stream: each sample's delta belongs to the node sampled. */
export function selfTimes(prof: CpuProfile): Map<number, number> {
  const self = new Map<number, number>()
  prof.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0))
  })
  return self
}

/** The package or workspace folder a frame's code belongs to: `pg`, `services/email`, `node`, `(vm)`. */
export function packageOf(url: string): string {
  const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m) return m[1]!
  const w = /\/(services|libs)\/([^/]+)\//.exec(url)
  if (w) return `${w[1]}/${w[2]}`
  return url.startsWith('node:') ? 'node' : url ? 'other' : '(vm)'
}

/** A frame's name with its file (shortened to the package or workspace path) and line. */
export function frameName(n: ProfileNode): string {
  const url = n.callFrame.url.replace(/^.*\/(node_modules|services|libs)\//, '$1/')
  const name = n.callFrame.functionName || '(anonymous)'
  return url ? `${name} ${url}:${n.callFrame.lineNumber + 1}` : name
}
