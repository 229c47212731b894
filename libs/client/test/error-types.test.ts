import { ERROR_CODES, ERROR_TYPE_BY_STATUS } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { errorTypeForStatus, statusForErrorType } from '../src/errors.js'

// The SDK keeps its own copy of the status → type table (it depends on no workspace package):
// it names the type of an answer that is not the contract's shape, and the status of an RPC error
// that arrives without one. This holds the copy to the services' table.
describe("the SDK's error types", () => {
  it.each(Object.entries(ERROR_TYPE_BY_STATUS))('status %s is %s, as the API says', (status, type) => {
    expect(errorTypeForStatus(Number(status))).toBe(type)
  })

  it.each(Object.entries(ERROR_CODES))(
    '%s: an RPC error of its type without a status gets one of that type',
    (_code, status) => {
      const type = errorTypeForStatus(status)
      expect(errorTypeForStatus(statusForErrorType(type))).toBe(type)
    },
  )
})
