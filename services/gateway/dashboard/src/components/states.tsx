import type { ReactNode } from 'react'
import { ApiError } from '../lib/api.js'
import type { Resource } from '../lib/use-resource.js'

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {what}…
    </div>
  )
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state empty">{children}</div>
}

/**
 * The API's code, param and request id of an error: what an operator quotes when asking for help
 * (the request id finds the request in the logs).
 */
const errorCode = (e: ApiError): string =>
  `${e.code}${e.param ? ` (${e.param})` : ''}${e.requestId ? ` · request ${e.requestId}` : ''}`

/** An error with what the operator can do about it; the request id helps find it in the logs. */
export function ErrorState({ error, retry }: { error: Error; retry?: () => void }) {
  const api = error instanceof ApiError ? error : null
  return (
    <div className="state error" role="alert">
      <p className="line">
        <strong>{api?.status === 404 ? 'Not found' : 'Something went wrong'}</strong>: {error.message}
      </p>
      {error instanceof ApiError && <p className="line muted small">{errorCode(error)}</p>}
      {retry && (
        <button type="button" className="btn" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  )
}

/** An inline error under a form or in a confirmation dialog. */
export function FormError({ error }: { error: Error | undefined }) {
  if (!error) return null
  return (
    <p className="form-error" role="alert">
      {error.message}{' '}
      {error instanceof ApiError && <span className="error-code small">{errorCode(error)}</span>}
    </p>
  )
}

/**
 * The loading, error and empty states of a resource around its content. `isEmpty` decides what
 * counts as empty (default: a `data` list with no items).
 */
export function AsyncView<T>({
  resource,
  children,
  empty,
  isEmpty,
  what,
}: {
  resource: Resource<T>
  children: (data: T) => ReactNode
  empty?: ReactNode
  isEmpty?: (data: T) => boolean
  what?: string
}) {
  const { data, error, loading, reload } = resource
  if (loading && data === undefined) return <Loading {...(what ? { what: `Loading ${what}` } : {})} />
  if (error && data === undefined) return <ErrorState error={error} retry={reload} />
  if (data === undefined) return null
  const none = isEmpty
    ? isEmpty(data)
    : Array.isArray((data as { data?: unknown }).data) && (data as { data: unknown[] }).data.length === 0
  return (
    <>
      {error && <ErrorState error={error} retry={reload} />}
      {none && empty ? <Empty>{empty}</Empty> : children(data)}
    </>
  )
}
