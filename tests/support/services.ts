import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ServiceName } from './stack.js'

const ROOT = join(import.meta.dirname, '..', '..')
const ALL: ServiceName[] = ['auth', 'email', 'dispatcher', 'webhook', 'broadcast', 'analytics', 'gateway']

/** Every service that has an app to start (all of them once the tree is complete). */
export function availableServices(): ServiceName[] {
  return ALL.filter((s) => existsSync(join(ROOT, 'services', s, 'src', 'app.ts')))
}
