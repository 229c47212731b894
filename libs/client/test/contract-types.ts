/**
 * Compile-time check (run by `tsc -p tsconfig.json`): the SDK's hand-written, dependency-free
 * types agree with the service's zod contracts, method by method. For every operation
 * (sdk-operations.ts) against its route's schemas (operation-schemas.ts, held to the catalog by
 * operation-schemas.test.ts):
 * - the answer type is the route's answer, in its list wrapper: each assignable to the other and
 *   the same keys, so a field missing, extra, of another type or of other optionality fails;
 * - the body and query the method sends are accepted by the route's input schemas, with the same
 *   keys and the same required keys (a field the API takes that the SDK cannot send fails);
 * - a method sends a body or a query exactly where its route takes one.
 * A failure names the operation and the part: `"emails.list: query"` does not satisfy `never`.
 */
import type * as C from '@mailer/contracts'
import type { z } from 'zod'
import type { Operation } from '../src/endpoints.js'
import type * as T from '../src/index.js'
import type { OperationSchemaTable } from './operation-schemas.js'
import type { RpcOperations, SdkOperations } from './sdk-operations.js'

type Fits<A, B> = [A] extends [B] ? true : false
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type All<X extends boolean[]> = X extends true[] ? true : false
type AssertNever<X extends never> = X
type Assert<X extends true> = X

type RequiredKeys<X> = { [K in keyof X]-?: Record<never, never> extends Pick<X, K> ? never : K }[keyof X]

/** An input the SDK sends (A) against what the route's schema takes (B). */
type InputMatches<A, B> = [A] extends [readonly (infer AI)[]]
  ? [B] extends [readonly (infer BI)[]]
    ? InputMatches<AI, BI>
    : false
  : All<[Fits<A, B>, Same<keyof A, keyof B>, Same<RequiredKeys<A>, RequiredKeys<B>>]>

/** An answer type of the SDK (A) against the route's answer (B), list items included. */
type OutputMatches<A, B> = All<
  [
    Same<A, B>,
    Same<keyof A, keyof B>,
    [A, B] extends [{ data: readonly (infer AI)[] }, { data: readonly (infer BI)[] }]
      ? Same<keyof AI, keyof BI>
      : true,
  ]
>

/** How a query value goes on the wire (a query string, or JSON for RPC): Dates as ISO strings. */
type Wire<V> = V extends Date
  ? string
  : V extends boolean
    ? 'true' | 'false'
    : V extends number
      ? `${number}`
      : V
type QueryString<Q> = { [K in keyof Q]: Wire<Q[K]> }
type Json<Q> = { [K in keyof Q]: Q[K] extends infer V ? (V extends Date ? string : V) : never }

type Wrapped<S extends z.ZodType, L> = L extends 'all'
  ? { data: z.output<S>[] }
  : L extends 'page'
    ? { data: z.output<S>[]; nextCursor: string | null }
    : z.output<S>

type Schemas<O extends Operation> = OperationSchemaTable[O]
type ListOf<S> = S extends { list: infer L } ? L : undefined

/** `Missing`: what a method that sends no such part gets when its route takes one. */
type InputPart<S, K, Part extends 'body' | 'query', Encode extends 'query' | 'json', Missing> = S extends {
  [P in Part]: infer Z extends z.ZodType
}
  ? K extends { [P in Part]: infer X }
    ? InputMatches<Encode extends 'query' ? QueryString<X> : Json<X>, z.input<Z>>
    : Missing
  : K extends { [P in Part]: unknown }
    ? false
    : true

interface Rest {
  nullable: never
  encode: 'query'
  /** Every route query is the SDK's to send (`dryRun` too). */
  queryMissing: false
  dryRun: never
}
interface Rpc {
  /** `get` answers null for an email the project lacks. */
  nullable: null
  encode: 'json'
  /** MailerRpc's send and sendBatch have no `dryRun` (libs/contracts/src/rpc.ts). */
  queryMissing: true
  /** So its send never answers a dry run's `{ id: null }`. */
  dryRun: { id: null }
}

type Problems<O extends Operation, K, V extends Rest | Rpc = Rest> =
  | (K extends { result: infer R }
      ? OutputMatches<
          R,
          | Exclude<Wrapped<Schemas<O>['response'], ListOf<Schemas<O>>>, V['dryRun']>
          | (O extends 'emails.get' ? V['nullable'] : never)
        > extends true
        ? never
        : `${O}: answer`
      : `${O}: answer`)
  | (InputPart<Schemas<O>, K, 'body', 'json', false> extends true ? never : `${O}: body`)
  | (InputPart<Schemas<O>, K, 'query', V['encode'], V['queryMissing']> extends true ? never : `${O}: query`)

export type Checks = [
  // Every operation has its entry, and nothing else.
  AssertNever<Exclude<Operation, keyof SdkOperations>>,
  AssertNever<Exclude<keyof SdkOperations, Operation>>,
  AssertNever<{ [O in Operation]: Problems<O, SdkOperations[O]> }[Operation]>,
  // MailerRpc runs the routes' code: their inputs and answers.
  AssertNever<{ [O in keyof RpcOperations]: Problems<O, RpcOperations[O], Rpc> }[keyof RpcOperations]>,
  // Parts of inputs whose route schema takes `unknown` at the top (checked by the handler).
  Assert<InputMatches<T.Attachment, z.input<typeof C.Attachment>>>,
  Assert<InputMatches<T.TemplateVariable, z.input<typeof C.TemplateVariable>>>,
  // A webhook receives what events.list answers.
  Assert<OutputMatches<T.MailerEvent, z.output<typeof C.EventPayload>>>,
]
