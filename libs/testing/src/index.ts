export { measuringPool, type StatementWork, statementWork } from './statement-work.js'
export type { TestEnv } from './test-env.js'
export { useTestEnv } from './test-env.js'
export { waitFor } from './wait-for.js'
