// Summarises a V8 .cpuprofile (from `BENCH_PROFILE=1 make bench`): the functions with the most
// self time, and the share of time per package. Usage: node --import tsx bench/src/profile-top.ts <file> [n]
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount: number
}
interface Profile {
  nodes: Node[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

const [file, nArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [n]')
  process.exit(64)
}
const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(prof.nodes.map((n) => [n.id, n]))
// Self time per node from the sample stream (each sample's delta belongs to the node sampled).
const selfUs = new Map<number, number>()
prof.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0))
})
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

const where = (url: string) => {
  const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m) return m[1]!
  const w = /\/(services|libs)\/([^/]+)\//.exec(url)
  if (w) return `${w[1]}/${w[2]}`
  return url.startsWith('node:') ? 'node' : url ? 'other' : '(vm)'
}
const fnKey = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|services|libs)\//, '$1/')}:${n.callFrame.lineNumber + 1}`

const byFn = new Map<string, number>()
const byPkg = new Map<string, number>()
for (const [id, us] of selfUs) {
  const node = byId.get(id)!
  byFn.set(fnKey(node), (byFn.get(fnKey(node)) ?? 0) + us)
  const pkg = where(node.callFrame.url)
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us)
}
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`
const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)

console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`)
console.log('\nself time by function:')
for (const [k, us] of top(byFn, Number(nArg ?? 25))) console.log(`${pct(us)}  ${k}`)
console.log('\nself time by package:')
for (const [k, us] of top(byPkg, 15)) console.log(`${pct(us)}  ${k}`)
