import react from '@vitejs/plugin-react'
import { defineConfig, type Plugin } from 'vite'

/**
 * `pnpm dev` serves the app at / with the gateway (`make dev`, :3000) behind /api. The gateway adds
 * a relative <base href> to the page it serves; the dev server gets a fixed one so deep links work.
 */
const devBase: Plugin = {
  name: 'mailer-dev-base',
  apply: 'serve',
  transformIndexHtml: (html) => html.replace('<head>', '<head><base href="/">'),
}

// `base: './'`: every URL in the built page is relative, so the gateway can serve it under
// /dashboard behind any ingress prefix.
export default defineConfig({
  base: './',
  plugins: [react(), devBase],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, assetsInlineLimit: 0 },
  server: {
    proxy: { '/api': { target: 'http://127.0.0.1:3000', rewrite: (p) => `/dashboard${p}` } },
  },
})
