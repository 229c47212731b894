import { type ReactNode, useRef, useState } from 'react'
import { FormError } from './states.js'

/**
 * A button that asks first, in a modal `<dialog>` (focus is trapped and Escape cancels; never the
 * browser's confirm(), which blocks the page). The action's error is shown in the dialog, with the API's code and request id.
 */
export function ConfirmButton({
  label,
  title,
  body,
  confirmLabel,
  onConfirm,
  danger = false,
  small = false,
  disabled = false,
}: {
  label: string
  title: string
  body: ReactNode
  confirmLabel?: string
  onConfirm: () => Promise<unknown>
  danger?: boolean
  small?: boolean
  disabled?: boolean
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error>()
  const open = () => {
    setError(undefined)
    ref.current?.showModal()
  }
  const confirm = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await onConfirm()
      ref.current?.close()
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)))
    } finally {
      setBusy(false)
    }
  }
  const cls = `btn${danger ? ' danger' : ''}${small ? ' small' : ''}`
  return (
    <>
      <button type="button" className={cls} onClick={open} disabled={disabled}>
        {label}
      </button>
      <dialog ref={ref} className="dialog" aria-label={title}>
        <h2>{title}</h2>
        <div>{body}</div>
        <FormError error={error} />
        <div className="actions">
          <button type="button" className="btn" onClick={() => ref.current?.close()} disabled={busy}>
            Cancel
          </button>
          <button
            type="button"
            className={`btn ${danger ? 'danger' : 'primary'}`}
            onClick={confirm}
            disabled={busy}
          >
            {busy ? 'Working…' : (confirmLabel ?? label)}
          </button>
        </div>
      </dialog>
    </>
  )
}
