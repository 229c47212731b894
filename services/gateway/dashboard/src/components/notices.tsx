import { createContext, type ReactNode, useCallback, useContext, useState } from 'react'

interface Notice {
  id: number
  text: string
  tone: 'ok' | 'error'
}

const Ctx = createContext<(text: string, tone?: Notice['tone']) => void>(() => undefined)

/** Short confirmations of actions ("Webhook disabled"), announced to screen readers. */
export function NoticeProvider({ children }: { children: ReactNode }) {
  const [notices, setNotices] = useState<Notice[]>([])
  const notify = useCallback((text: string, tone: Notice['tone'] = 'ok') => {
    const id = Date.now() + Math.random()
    setNotices((n) => [...n.slice(-2), { id, text, tone }])
    window.setTimeout(() => setNotices((n) => n.filter((x) => x.id !== id)), 5000)
  }, [])
  return (
    <Ctx.Provider value={notify}>
      {children}
      <div className="notices" aria-live="polite" role="status">
        {notices.map((n) => (
          <div key={n.id} className={`notice ${n.tone}`}>
            {n.text}
          </div>
        ))}
      </div>
    </Ctx.Provider>
  )
}

export const useNotify = () => useContext(Ctx)
