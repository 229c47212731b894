import { useEffect, useState } from 'react'
import { NoticeProvider } from './components/notices.js'
import { Loading } from './components/states.js'
import { Layout } from './layout.js'
import { api, setCsrfToken, setSignedOutHandler } from './lib/api.js'
import { ProjectsProvider } from './lib/projects.js'
import type { SessionCheck, SessionInfo } from './lib/types.js'
import { SignIn, SignInAgain } from './pages/sign-in.js'
import { Routes } from './routes.js'

type SessionState =
  | { kind: 'checking' }
  | { kind: 'signed-out' }
  // `expired`: the session ended under the open page, which stays mounted behind a sign-in.
  | { kind: 'signed-in'; session: SessionInfo; expired?: boolean }

/** Finds out whether this browser has a session, then shows the sign-in page or the dashboard. */
export function App() {
  const [state, setState] = useState<SessionState>({ kind: 'checking' })

  useEffect(() => {
    setSignedOutHandler(() => setState((s) => (s.kind === 'signed-in' ? { ...s, expired: true } : s)))
    api.get<SessionCheck>('session').then(
      (session) => {
        if (!session.signedIn) return setState({ kind: 'signed-out' })
        setCsrfToken(session.csrfToken)
        setState({ kind: 'signed-in', session })
      },
      (e) => {
        // The gateway could not say (unreachable, sign-outs loading): the form, where signing in
        // shows the error if it persists.
        console.warn('session check failed', e)
        setState({ kind: 'signed-out' })
      },
    )
  }, [])

  if (state.kind === 'checking') return <Loading what="Starting" />
  if (state.kind === 'signed-out') {
    return (
      <SignIn
        onSignedIn={(session) => {
          setCsrfToken(session.csrfToken)
          setState({ kind: 'signed-in', session })
        }}
      />
    )
  }
  // A sign-out the gateway refused (it could not store it, or could not be reached) left the
  // session as it was: the page stays signed in and says so (Layout) rather than look signed out
  // while the cookie still opens the dashboard.
  const signOut = async () => {
    await api.del('session')
    setCsrfToken('')
    setState({ kind: 'signed-out' })
  }
  const signedIn = (session: SessionInfo) => {
    setCsrfToken(session.csrfToken)
    setState({ kind: 'signed-in', session })
  }
  return (
    <NoticeProvider>
      <ProjectsProvider>
        <Layout onSignOut={signOut}>
          <Routes />
        </Layout>
        {state.expired && (
          <SignInAgain
            onSignedIn={signedIn}
            onDismiss={() => setState((s) => (s.kind === 'signed-in' ? { ...s, expired: false } : s))}
          />
        )}
      </ProjectsProvider>
    </NoticeProvider>
  )
}
