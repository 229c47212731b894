import { createHash, randomInt } from 'node:crypto'
import { KEY_PREFIX_LENGTH, MailerError } from '@mailer/contracts'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** `fs_live_` / `fs_test_` + 32 random letters and digits (interface.md part 2). */
export function generateKey(mode: 'live' | 'test'): { key: string; prefix: string; hash: string } {
  let random = ''
  for (let i = 0; i < 32; i++) random += ALPHABET[randomInt(ALPHABET.length)]
  const key = `fs_${mode}_${random}`
  return { key, prefix: key.slice(0, KEY_PREFIX_LENGTH), hash: hashKey(key) }
}

/** Only this hash is stored; a lost key cannot be recovered. */
export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex')

export interface KeyState {
  revokedAt: Date | null
  expiresAt: Date | null
  projectDisabled: boolean
}

/** The auth failure a known key gets now, in the order interface.md part 5 lists them. */
export function keyStateError(state: KeyState, now: Date): MailerError | null {
  if (state.revokedAt) return new MailerError('revoked_api_key', 'This API key has been revoked')
  if (state.expiresAt && state.expiresAt.getTime() <= now.getTime()) {
    return new MailerError('expired_api_key', 'This API key has expired')
  }
  if (state.projectDisabled)
    return new MailerError('project_disabled', 'The project of this API key is disabled')
  return null
}
