import { ID_PREFIX, type RouteDef, unstorablePart } from '@mailer/contracts'
import fc from 'fast-check'
import { z } from 'zod'
import { shapedValue, withOneFault } from './fuzz-schema.js'

/** Every byte of `s` outside the unreserved characters percent-encoded (a lone surrogate as U+FFFD). */
export const pct = (s: string): string =>
  [...Buffer.from(s, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b)
      return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
    })
    .join('')

const ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV'
const PREFIXES = Object.values(ID_PREFIX)

/**
 * A path segment as sent, naming no resource: unicode, ids of the wrong kind or none, overlong
 * ones, and escapes left raw on purpose (`..`, `%2e%2e`, `%2F`, `%00`, a lone `%`, bad UTF-8).
 * No raw `?` or `#`: those would end the path and make the request another, well-formed one.
 */
export const weirdSegment: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }).map(pct),
  fc.string({ unit: 'binary', maxLength: 20 }).map(pct),
  fc.constantFrom(...PREFIXES).map((p) => `${p}_${ULID}`),
  fc
    .tuple(fc.constantFrom(...PREFIXES), fc.string({ unit: 'grapheme', maxLength: 30 }))
    .map(([p, s]) => `${p}_${pct(s)}`),
  fc.integer({ min: 200, max: 6000 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom(
    ...['', '..', '.', '%2e%2e', '%2E%2E%2F..', '..%2F..%2Fadmin', '%2F', '%5C', '\\', '%00', '%', '%ZZ'],
    ...['%E0%A4%A', '%C0%AE', '%FF', ';', 'a;b=c', '%3B', '*', "'", '(', '$', '&', '=', '+', ':', '@'],
    ...['%3F', '%23', '%20', '%09', '%0D%0A', '%EF%BB%BF', '%F0%9F%92%A9', 'email_%00', '__proto__'],
    ...['constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'undefined', '0', '-1', '1e999'],
  ),
)

const cursorJunk = fc
  .oneof(
    fc.string({ maxLength: 40 }),
    fc
      .tuple(
        fc.constantFrom(
          '2026-01-01T00:00:00.000Z',
          '0000-01-01T00:00:00Z',
          '+275760-09-13T00:00:00.000Z',
          'x',
        ),
        fc.constantFrom(`email_${ULID}`, 'evt_\u0000', 'a\ud800', '', '|'),
      )
      .map(([d, id]) => `${d}|${id}`),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  )
  .map((s) => Buffer.from(s, 'utf8').toString('base64url'))

const queryValue = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }).map(pct),
  fc.constantFrom(
    ...['', '-1', '0', '101', '1e9', 'NaN', 'Infinity', '0x10', '%205', '5%20', '1.5', '2147483648'],
    ...['99999999999999999999', 'true', 'false', 'yes', 'null', '[]', '{}', '2026-13-45', 'now'],
    ...['0000-01-01T00:00:00Z', '%2B275760-09-13T00:00:00.000Z', '%ZZ', '%', '%E0%A4%A', '%00'],
    ...['%C0%AE', '%FF', 'a+b', '%2B', '%26', '%3D', '%5B%5D', '7d', 'hour', 'queued'],
  ),
  fc.integer({ min: 1000, max: 6000 }).map((n) => '9'.repeat(n)),
  cursorJunk,
)

/** The keys a schema knows, through pipes (an object behind a transform). */
function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> | null {
  if (schema instanceof z.ZodObject) return schema.shape as Record<string, z.ZodType>
  if (schema instanceof z.ZodPipe) return shapeOf(schema.in as z.ZodType)
  return null
}

/**
 * A query string: the route's own parameters and others (`__proto__`, `hasOwnProperty`), plain,
 * bracketed, indexed, nested, repeated, bare or nameless; bad encodings; values far too long; over
 * a thousand parameters.
 */
export function queryFor(def?: RouteDef): fc.Arbitrary<string> {
  const known = Object.keys(shapeOf(def?.query) ?? {})
  const key = fc.oneof(
    ...(known.length ? [fc.constantFrom(...known)] : []),
    fc.constantFrom('limit', 'cursor', '__proto__', 'constructor', 'hasOwnProperty', 'toString', 'a.b'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map(pct),
  )
  const form = fc.constantFrom('plain', 'plain', 'bracket', 'index', 'nested', 'repeat', 'bare', 'nameless')
  const part = fc.tuple(key, queryValue, queryValue, form).map(([k, v, w, f]) => {
    if (f === 'bracket') return `${k}[]=${v}`
    if (f === 'index') return `${k}[0]=${v}`
    if (f === 'nested') return `${k}[a][b]=${v}`
    if (f === 'repeat') return `${k}=${v}&${k}=${w}`
    if (f === 'bare') return k
    if (f === 'nameless') return `=${v}`
    return `${k}=${v}`
  })
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 6, arbitrary: fc.array(part, { minLength: 1, maxLength: 5 }).map((ps) => ps.join('&')) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 900, max: 1300 })
        .map((n) => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&')),
    },
    { weight: 1, arbitrary: fc.constantFrom('&&&', '=', '%', '&=&=', ';', 'a=1;b=2', '?', '[', ']=1') },
  )
}

const nested = (depth: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v }
  return v
}

/** Objects whose own keys try to reach a prototype once merged or assigned somewhere. */
const polluting = fc
  .constantFrom(
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"__proto__":null}',
    '{"__proto__":[1]}',
    '{"prototype":{"polluted":true},"toString":1,"hasOwnProperty":"x","valueOf":null}',
  )
  .map((s) => JSON.parse(s) as Record<string, unknown>)

/** A value for any field: of the wrong type, at a limit, too long, too deep, unstorable, polluting. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    ...[null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 2147483648, -2147483649, [], {}, [[[]]]],
    ...['', ' ', '0', 'true', 'null', '2026-02-30T25:61:00Z', '0000-01-01T00:00:00Z', 'a@b', '<b>'],
    ...['+275760-09-13T00:00:00.000Z', '9999-12-31T23:59:59-23:59', 'x\u0000y', '\ud800', 'a\udfffb'],
    ...['\u202e', '\ufeff', '{{', '{{#each}}', 'http://127.0.0.1/', 'javascript:alert(1)', 'a\r\nBcc: x@y'],
  ),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.integer({ min: 1000, max: 200_000 }).map((n) => 'x'.repeat(n)),
  fc.integer({ min: 65, max: 300 }).map(nested),
  polluting,
)

/** An object of some of the schema's own keys (and sometimes polluting ones) with odd values. */
function knownKeysObject(shape: Record<string, z.ZodType>): fc.Arbitrary<unknown> {
  const keys = Object.keys(shape)
  return fc
    .tuple(
      fc.subarray(keys, { minLength: 1 }),
      fc.array(oddValue, { minLength: keys.length, maxLength: keys.length }),
      fc.option(polluting),
    )
    .map(([ks, vs, extra]) => {
      const o: Record<string, unknown> = extra ? { ...extra } : {}
      for (const [i, k] of ks.entries())
        Object.defineProperty(o, k, { value: vs[i], enumerable: true, writable: true })
      return o
    })
}

const junkJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.boolean(),
  fc.array(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(
    fc.string({ minLength: 1, maxLength: 8 }).map((k) => `zz_${k}`),
    fc.jsonValue({ maxDepth: 2 }),
    { minKeys: 1, maxKeys: 4 },
  ),
  polluting,
  fc.integer({ min: 65, max: 300 }).map(nested),
)

/** Text that is no JSON at all, or not only JSON. */
const notJson = fc.oneof(
  fc.constantFrom(
    ...['{', '{"a":', '\u0000\u0001', '\ufeff{}', "{'a':1}", '{"a":1,}', '[1,]', 'undefined', 'NaN'],
    ...['a=1&b=2', '<xml/>', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--', '{}{}'],
    ...['{"a":1} trailing', '"\\ud800', '"\\u00"', '1e99999', '-', '['.repeat(200_000)],
  ),
  fc.string({ minLength: 1 }).map((s) => `{${s}`),
  // Nesting deeper than any encoder here could write (valid JSON all the same).
  fc.integer({ min: 1000, max: 100_000 }).map((n) => `${'{"a":['.repeat(n)}1${']}'.repeat(n)}`),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')),
)

/** True when the route must refuse `value` as its body: its schema fails, or it cannot be stored. */
export function refuses(def: RouteDef, value: unknown): boolean {
  // The batch takes any array and answers each item; its documented schema is what an item must be.
  const schema = def.documentedBody ?? def.body
  if (!schema) return true
  return !schema.safeParse(value).success || unstorablePart(value) !== null
}

export interface FuzzBody {
  /** The bytes to send. */
  text: string
  /** The route's schema takes it: only sent where a path id no resource has must still refuse it. */
  accepted: boolean
}

/**
 * A body for `def`: junk JSON, no JSON, deep nesting, polluting keys, objects (or arrays of them,
 * for array bodies) of the route's own keys with odd values, and bodies of the route's shape with
 * one field wrong, missing or unknown. Bodies the route would take (its shape, unchanged) are kept
 * only for routes with an id in the path (`withId`): there the weird id must be the refusal.
 */
export function bodyFor(def: RouteDef | undefined, withId: boolean): fc.Arbitrary<FuzzBody> {
  const schema = def?.documentedBody ?? def?.body
  const element = schema instanceof z.ZodArray ? (schema.element as z.ZodType) : undefined
  const shape = shapeOf(element ?? schema)
  const values: fc.Arbitrary<unknown>[] = [junkJson]
  if (shape) {
    const obj = knownKeysObject(shape)
    values.push(element ? fc.array(obj, { minLength: 1, maxLength: 3 }) : obj)
  }
  // A body of the right shape but for one field: the refusal must come from that field.
  const shaped = shapedValue(schema)
  if (shaped) values.push(shaped.chain((base) => withOneFault(base, oddValue)))
  if (withId && shaped) values.push(shaped, fc.constant({}))
  const json = fc.oneof(...values).map((v) => {
    const text = JSON.stringify(v) ?? 'null'
    return { text, accepted: def ? !refuses(def, JSON.parse(text)) : false }
  })
  const body = fc.oneof(
    { weight: 4, arbitrary: json },
    { weight: 1, arbitrary: notJson.map((text) => ({ text, accepted: false })) },
  )
  return withId ? body : body.filter((b) => !b.accepted)
}
