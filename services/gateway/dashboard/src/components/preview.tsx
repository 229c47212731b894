/**
 * An email's HTML, shown inert: `sandbox=""` gives the frame an opaque origin with scripts,
 * forms, popups, top navigation and plugins all disabled, and `srcdoc` means nothing is fetched
 * from our origin. This is the only place the dashboard hands API text to the browser as HTML.
 * The frame also inherits the dashboard's CSP (no scripts, no frames; https/data images only).
 */
export function EmailPreview({ html, title = 'Email preview' }: { html: string; title?: string }) {
  return (
    <iframe
      className="preview"
      title={title}
      sandbox=""
      srcDoc={html}
      referrerPolicy="no-referrer"
      loading="lazy"
      data-testid="email-preview"
    />
  )
}
