import { describe, expect, it } from 'vitest'
import type { CpuProfile } from './cpu-profile.js'
import { callTree, flameSvg, folded } from './flame-graph.js'

const frame = (id: number, functionName: string, children: number[] = [], url = '') => ({
  id,
  callFrame: { functionName, url, lineNumber: 0 },
  children,
})

// root → main → { sign (twice, from two call sites), query }, and idle time.
const profile: CpuProfile = {
  nodes: [
    frame(1, '(root)', [2, 6]),
    frame(2, 'main', [3, 4, 5], '/app/services/dispatcher/src/main.ts'),
    frame(3, 'sign', [], 'node:internal/crypto/sig'),
    frame(4, 'sign', [], 'node:internal/crypto/sig'),
    frame(5, 'query', [], '/app/node_modules/pg/lib/client.js'),
    frame(6, '(idle)'),
  ],
  startTime: 0,
  endTime: 100,
  // Each sample's delta belongs to the node sampled.
  samples: [3, 4, 5, 2, 6, 6],
  timeDeltas: [10, 20, 5, 1, 50, 50],
}

describe('flame graphs', () => {
  it('merges call sites of one function, leaves idle out and keeps inclusive times', () => {
    const root = callTree(profile)
    expect(root.totalUs).toBe(36)
    const main = root.children[0]!
    expect(main).toMatchObject({
      name: 'main services/dispatcher/src/main.ts:1',
      pkg: 'services/dispatcher',
      totalUs: 36,
    })
    expect(main.children.map((c) => [c.name, c.pkg, c.totalUs])).toEqual([
      ['query node_modules/pg/lib/client.js:1', 'pg', 5],
      ['sign node:internal/crypto/sig:1', 'node', 30],
    ])
  })

  it('writes folded stacks with each path’s own time', () => {
    expect(folded(callTree(profile)).trim().split('\n')).toEqual([
      'main services/dispatcher/src/main.ts:1 1',
      'main services/dispatcher/src/main.ts:1;query node_modules/pg/lib/client.js:1 5',
      'main services/dispatcher/src/main.ts:1;sign node:internal/crypto/sig:1 30',
    ])
  })

  it('draws one rectangle per frame, as wide as its share, with its time in the tooltip', () => {
    const svg = flameSvg(callTree(profile), 'dispatcher', 360)
    const widths = [...svg.matchAll(/<rect [^>]*width="([\d.]+)"/g)].map((m) => Number(m[1]))
    // all, main, query, sign
    expect(widths).toEqual([360, 360, 50, 300])
    expect(svg).toContain('<title>sign node:internal/crypto/sig:1 (node): 0.0 ms, 83.33 %</title>')
    expect(svg.startsWith('<?xml')).toBe(true)
  })
})
