import { useEffect, useState } from 'react'
import { NoticeProvider } from './components/notices.js'
import { Loading } from './components/states.js'
import { Layout } from './layout.js'
import { ApiError, api, setCsrfToken, setSignedOutHandler } from './lib/api.js'
import { ProjectsProvider } from './lib/projects.js'
import type { SessionInfo } from './lib/types.js'
import { SignIn } from './pages/sign-in.js'
import { Routes } from './routes.js'

type SessionState =
  | { kind: 'checking' }
  | { kind: 'signed-out'; expired: boolean }
  | { kind: 'signed-in'; session: SessionInfo }

/** Finds out whether this browser has a session, then shows the sign-in page or the dashboard. */
export function App() {
  const [state, setState] = useState<SessionState>({ kind: 'checking' })

  useEffect(() => {
    setSignedOutHandler(() => setState({ kind: 'signed-out', expired: true }))
    api.get<SessionInfo>('session').then(
      (session) => {
        setCsrfToken(session.csrfToken)
        setState({ kind: 'signed-in', session })
      },
      (e) => {
        // Not signed in is the normal case here; anything else still leads to the form.
        if (!(e instanceof ApiError) || e.code !== 'invalid_session') console.warn('session check failed', e)
        setState({ kind: 'signed-out', expired: false })
      },
    )
  }, [])

  if (state.kind === 'checking') return <Loading what="Starting" />
  if (state.kind === 'signed-out') {
    return (
      <SignIn
        expired={state.expired}
        onSignedIn={(session) => {
          setCsrfToken(session.csrfToken)
          setState({ kind: 'signed-in', session })
        }}
      />
    )
  }
  const signOut = async () => {
    try {
      await api.del('session')
    } finally {
      setCsrfToken('')
      setState({ kind: 'signed-out', expired: false })
    }
  }
  return (
    <NoticeProvider>
      <ProjectsProvider>
        <Layout onSignOut={signOut}>
          <Routes />
        </Layout>
      </ProjectsProvider>
    </NoticeProvider>
  )
}
