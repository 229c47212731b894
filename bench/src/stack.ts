import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

export { freePort, PrivateNats, PrivatePostgres, until } from '../../tests/support/infra.js'
export { type ServiceName, ServiceProcess } from '../../tests/support/service-process.js'

export const ROOT = join(import.meta.dirname, '..', '..')

export function ensureDir(p: string): string {
  mkdirSync(p, { recursive: true })
  return p
}
