// Flame graphs of V8 .cpuprofile files: the call tree with each frame as wide as the CPU time spent
// in it and below it. `BENCH_PROFILE=1 make bench` writes one SVG per service next to its profile
// (open it in a browser: hover a frame for its name and time); `flamegraph.ts` makes one from any
// profile, or the folded stacks (`a;b;c <µs>` lines) that flamegraph.pl and speedscope read.
import { type CpuProfile, frameName, type ProfileNode, packageOf, selfTimes } from './cpu-profile.js'

/** A frame of the merged call tree: the same function called from the same path is one frame. */
export interface Frame {
  name: string
  pkg: string
  /** CPU time in this frame and everything it called, µs. */
  totalUs: number
  children: Frame[]
}

/**
 * The call tree of a profile with times from its samples. Frames with the same name under the
 * same parent are merged (V8 keeps one node per call site). `(idle)` is left out, so widths are
 * shares of busy time; `(program)` and `(garbage collector)` stay, as they are work.
 */
export function callTree(prof: CpuProfile): Frame {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]))
  const self = selfTimes(prof)
  const root: Frame = { name: 'all', pkg: '', totalUs: 0, children: [] }
  const add = (node: ProfileNode, parent: Frame): number => {
    const name = frameName(node)
    if (name === '(idle)') return 0
    let frame = parent.children.find((c) => c.name === name)
    if (!frame) {
      frame = { name, pkg: packageOf(node.callFrame.url), totalUs: 0, children: [] }
      parent.children.push(frame)
    }
    let us = self.get(node.id) ?? 0
    for (const c of node.children ?? []) us += add(byId.get(c)!, frame)
    frame.totalUs += us
    return us
  }
  // The profile's own root node ("(root)") is `all`.
  const top = prof.nodes[0]
  for (const c of top?.children ?? []) root.totalUs += add(byId.get(c)!, root)
  const prune = (f: Frame) => {
    f.children = f.children.filter((c) => c.totalUs > 0).sort((a, b) => a.name.localeCompare(b.name))
    f.children.forEach(prune)
  }
  prune(root)
  return root
}

/** Folded stacks: one `frame;frame;frame <self µs>` line per path with time of its own. */
export function folded(root: Frame): string {
  const lines: string[] = []
  const walk = (f: Frame, path: string[]) => {
    const own = f.totalUs - f.children.reduce((s, c) => s + c.totalUs, 0)
    const here = f === root ? path : [...path, f.name.replace(/;/g, ',')]
    if (own > 0 && here.length > 0) lines.push(`${here.join(';')} ${Math.round(own)}`)
    for (const c of f.children) walk(c, here)
  }
  walk(root, [])
  return `${lines.join('\n')}\n`
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** A stable warm colour per package, so one package's frames read as one colour. */
function colour(pkg: string): string {
  let h = 0
  for (const ch of pkg) h = (h * 31 + ch.charCodeAt(0)) >>> 0
  return `hsl(${(h % 50) + 5}, ${60 + (h % 30)}%, ${55 + ((h >> 8) % 20)}%)`
}

/**
 * An SVG flame graph (callers below, callees above), `width` pixels wide. Frames narrower than
 * `minPx` are left out; labels are cut to what fits.
 */
export function flameSvg(root: Frame, title: string, width = 1200, minPx = 0.3): string {
  const rowH = 16
  const scale = root.totalUs > 0 ? width / root.totalUs : 0
  // Laid out first, drawn once the height is known (the root at the bottom).
  const boxes: Array<{ f: Frame; x: number; w: number; depth: number }> = []
  const layout = (f: Frame, x: number, depth: number) => {
    const w = f.totalUs * scale
    if (w < minPx) return
    boxes.push({ f, x, w, depth })
    let cx = x
    for (const c of f.children) {
      layout(c, cx, depth + 1)
      cx += c.totalUs * scale
    }
  }
  layout(root, 0, 0)
  const height = (Math.max(0, ...boxes.map((b) => b.depth)) + 1) * rowH + 30
  const body = boxes
    .map(({ f, x, w, depth }) => {
      const y = height - (depth + 1) * rowH
      const share = ((f.totalUs / root.totalUs) * 100).toFixed(2)
      const label =
        w > 30
          ? `<text x="${(x + 3).toFixed(2)}" y="${y}" dy="11">${esc(f.name.slice(0, Math.floor((w - 6) / 6.5)))}</text>`
          : ''
      return (
        `<g><title>${esc(f.name)} (${esc(f.pkg || 'all')}): ${(f.totalUs / 1000).toFixed(1)} ms, ${share} %</title>` +
        `<rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${rowH - 1}" fill="${f === root ? '#ddd' : colour(f.pkg)}"/>` +
        `${label}</g>`
      )
    })
    .join('\n')
  return `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="monospace" font-size="11">
<text x="4" y="16" font-size="13">${esc(title)}: ${(root.totalUs / 1e6).toFixed(2)} s of CPU (idle left out)</text>
${body}
</svg>
`
}
