// Summarises a V8 .cpuprofile (from `BENCH_PROFILE=1 make bench`): the functions with the most
// self time, and the share of time per package. Usage: node --import tsx bench/src/profile-top.ts <file> [n]
import { frameName, packageOf, readProfile, selfTimes } from './cpu-profile.js'

const [file, nArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: profile-top.ts <file.cpuprofile> [n]')
  process.exit(64)
}
const prof = readProfile(file)
const byId = new Map(prof.nodes.map((n) => [n.id, n]))
const selfUs = selfTimes(prof)
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

const byFn = new Map<string, number>()
const byPkg = new Map<string, number>()
for (const [id, us] of selfUs) {
  const node = byId.get(id)!
  byFn.set(frameName(node), (byFn.get(frameName(node)) ?? 0) + us)
  const pkg = packageOf(node.callFrame.url)
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us)
}
const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`
const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)

console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`)
console.log('\nself time by function:')
for (const [k, us] of top(byFn, Number(nArg ?? 25))) console.log(`${pct(us)}  ${k}`)
console.log('\nself time by package:')
for (const [k, us] of top(byPkg, 15)) console.log(`${pct(us)}  ${k}`)
