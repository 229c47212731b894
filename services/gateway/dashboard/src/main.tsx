import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './app.js'
import { applyTheme } from './lib/theme.js'
// Order matters: later files refine earlier ones (the phone layout comes last).
import './styles/theme.css'
import './styles/base.css'
import './styles/controls.css'
import './styles/parts.css'
import './styles/phone.css'

// Before the first render, so a pinned theme never flashes the other one.
applyTheme()
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
