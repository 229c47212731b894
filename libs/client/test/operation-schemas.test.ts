import { ROUTES } from '@mailer/contracts'
import { listKind } from '@mailer/openapi'
import { describe, expect, it } from 'vitest'
import { ENDPOINTS, type Operation } from '../src/endpoints.js'
import { OPERATION_SCHEMAS, type OperationSchemas } from './operation-schemas.js'

// contract-types.ts checks the SDK's types against OPERATION_SCHEMAS; this holds the table to the
// catalog, so that the type check is made against the schemas the routes really use.
describe('the schemas the SDK type check uses', () => {
  const table = OPERATION_SCHEMAS as Record<Operation, OperationSchemas>

  it.each(Object.keys(ENDPOINTS) as Operation[])('%s: its route’s body, query, answer and wrapper', (op) => {
    const [method, path] = ENDPOINTS[op]
    const route = ROUTES.find((r) => r.method === method && r.path === path)
    expect(route, `${method} ${path}`).toBeDefined()
    const want = table[op]
    expect(want.body === (route!.documentedBody ?? route!.body), 'body').toBe(true)
    expect(want.query === route!.query, 'query').toBe(true)
    expect(want.response === route!.response, 'response').toBe(true)
    expect(want.list, 'list wrapper').toBe(listKind(route!))
  })
})
