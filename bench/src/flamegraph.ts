// A flame graph of a V8 .cpuprofile (flame-graph.ts). Usage:
//   node --import tsx bench/src/flamegraph.ts <file.cpuprofile> [--folded] > out.svg
import { basename } from 'node:path'
import { readProfile } from './cpu-profile.js'
import { callTree, flameSvg, folded } from './flame-graph.js'

const [file, flag] = process.argv.slice(2)
if (!file || (flag && flag !== '--folded')) {
  console.error('usage: flamegraph.ts <file.cpuprofile> [--folded]')
  process.exit(64)
}
const tree = callTree(readProfile(file))
process.stdout.write(flag ? folded(tree) : flameSvg(tree, basename(file)))
