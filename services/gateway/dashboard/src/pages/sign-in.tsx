import { type FormEvent, useState } from 'react'
import { FormError } from '../components/states.js'
import { api } from '../lib/api.js'
import { useTitle } from '../lib/router.js'
import type { SessionInfo } from '../lib/types.js'
import { useAction } from '../lib/use-resource.js'

/** Sign-in with the deployment's admin key; the key is sent once and never stored in the page. */
export function SignIn({ onSignedIn, expired }: { onSignedIn: (s: SessionInfo) => void; expired: boolean }) {
  useTitle('Sign in')
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
    <main id="main" className="signin">
      <form className="card signin-card" onSubmit={submit} aria-labelledby="signin-title">
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
    </main>
  )
}
