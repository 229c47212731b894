import { type FormEvent, useEffect, useRef, useState } from 'react'
import { FormError } from '../components/states.js'
import { api } from '../lib/api.js'
import { useTitle } from '../lib/router.js'
import type { SessionInfo } from '../lib/types.js'
import { useAction } from '../lib/use-resource.js'

/** The admin key form; the key is sent once and never stored in the page. */
function SignInForm({
  onSignedIn,
  expired,
  className,
}: {
  onSignedIn: (s: SessionInfo) => void
  expired: boolean
  className: string
}) {
  const [key, setKey] = useState('')
  const action = useAction(async () => {
    const s = await api.post<SessionInfo>('session', { key })
    setKey('')
    onSignedIn(s)
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    void action.run()
  }
  return (
    <form className={className} onSubmit={submit} aria-labelledby="signin-title">
      <h1 id="signin-title">Mailer dashboard</h1>
      {expired && (
        <p className="notice-inline" role="status">
          Your session ended. Sign in again to continue.
        </p>
      )}
      <div className="field">
        <label htmlFor="admin-key">Admin key</label>
        <input
          id="admin-key"
          name="admin-key"
          type="password"
          autoComplete="current-password"
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-describedby="admin-key-hint"
        />
        <small id="admin-key-hint" className="muted">
          The deployment's ADMIN_API_KEY. You stay signed in for a few hours on this browser.
        </small>
      </div>
      <FormError error={action.error} />
      <button type="submit" className="btn primary" disabled={action.busy || !key}>
        {action.busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  )
}

/** The sign-in page: before a session exists, and after signing out. */
export function SignIn({ onSignedIn }: { onSignedIn: (s: SessionInfo) => void }) {
  useTitle('Sign in')
  return (
    <main id="main" className="signin">
      <SignInForm className="card signin-card" onSignedIn={onSignedIn} expired={false} />
    </main>
  )
}

/**
 * Sign-in over the page when the session ended under it (expired, signed out in another tab): the
 * page stays mounted behind the modal, so what the operator typed (a template being edited) is
 * still there afterwards. Nothing is sent again by itself: the operator repeats the action, and
 * can check first that it is still wanted. Escape closes it (to copy something out first); the
 * next refused request opens it again.
 */
export function SignInAgain({
  onSignedIn,
  onDismiss,
}: {
  onSignedIn: (s: SessionInfo) => void
  onDismiss: () => void
}) {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    ref.current?.showModal()
  }, [])
  return (
    <dialog ref={ref} className="dialog signin-again" aria-label="Sign in again" onClose={onDismiss}>
      <SignInForm className="signin-card" onSignedIn={onSignedIn} expired />
    </dialog>
  )
}
