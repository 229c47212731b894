import { useState } from 'react'

/** `system` follows prefers-color-scheme; `light`/`dark` pin the theme (kept in localStorage). */
export type ThemeChoice = 'system' | 'light' | 'dark'

const KEY = 'mailer.dashboard.theme'

function stored(): ThemeChoice {
  try {
    const v = window.localStorage.getItem(KEY)
    return v === 'light' || v === 'dark' ? v : 'system'
  } catch {
    return 'system'
  }
}

/** The stylesheet reads `data-theme` on <html>; without it, the media query decides. */
export function applyTheme(choice: ThemeChoice = stored()): void {
  if (choice === 'system') delete document.documentElement.dataset.theme
  else document.documentElement.dataset.theme = choice
}

export function useTheme(): [ThemeChoice, (c: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(stored)
  const set = (c: ThemeChoice) => {
    try {
      if (c === 'system') window.localStorage.removeItem(KEY)
      else window.localStorage.setItem(KEY, c)
    } catch {
      /* private mode: the choice lasts for this page only */
    }
    applyTheme(c)
    setChoice(c)
  }
  return [choice, set]
}
