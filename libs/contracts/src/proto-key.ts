import { z } from 'zod'

/**
 * The one key no map of the API can hold. zod 4 leaves `__proto__` out of a record's output
 * without an issue (assigning it would set the output's prototype), so a tag or a contact's data
 * key of that name was accepted and silently lost. Maps whose keys the API validates refuse it
 * by name instead.
 */
export const PROTO_KEY = '__proto__'

/**
 * `record`, refusing an own `__proto__` key of its input as a custom issue at that key (param
 * `<field>.__proto__`). One own-property check on the map itself, no walk of its values: the
 * accept path pays nothing measurable. The OpenAPI document still shows `record` (a preprocess
 * documents its output schema).
 */
export function withoutProtoKey<T extends z.ZodType>(record: T, what: string) {
  return z.preprocess((value, ctx) => {
    if (value !== null && typeof value === 'object' && Object.hasOwn(value, PROTO_KEY))
      ctx.addIssue({
        code: 'custom',
        message: `${what} cannot be named ${PROTO_KEY}`,
        path: [PROTO_KEY],
        input: value,
      })
    return value
  }, record)
}
