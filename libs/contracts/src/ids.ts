import { monotonicFactory } from 'ulid'

export const ID_PREFIX = {
  email: 'email',
  event: 'evt',
  webhook: 'wh',
  delivery: 'whd',
  contact: 'ct',
  audience: 'aud',
  broadcast: 'bc',
  template: 'tmpl',
  apiKey: 'key',
  project: 'proj',
  domain: 'dom',
} as const

export type IdKind = keyof typeof ID_PREFIX

// ulid's own PRNG asks the platform for one random byte per character (16 calls per id, a few %
// of the accept path's CPU: bench/README.md); this draws them 4 KiB at a time from the same
// CSPRNG. A byte / 256 picks each of ulid's 32 characters with equal probability.
const pool = new Uint8Array(4096)
let next = pool.length
function prng(): number {
  if (next >= pool.length) {
    globalThis.crypto.getRandomValues(pool)
    next = 0
  }
  return pool[next++]! / 256
}

// Monotonic so that ids made in the same millisecond still sort in creation order, which keeps
// keyset pagination on (createdAt, id) stable.
const nextUlid = monotonicFactory(prng)

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${nextUlid()}`
}

const ULID_RE = '[0-9A-HJKMNP-TV-Z]{26}'
export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${ID_PREFIX[kind]}_${ULID_RE}$`).test(value)
}
