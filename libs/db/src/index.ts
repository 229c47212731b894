export type { Db, DbOptions } from './client.js'
export {
  clientQueryTimeout,
  createDb,
  DEFAULT_QUERY_TIMEOUT_MS,
  pingDb,
  schemaOf,
  serverOptions,
} from './client.js'
export type * from './generated/client/index.js'
export { Prisma } from './generated/client/index.js'
export { GroupCommit, type GroupCommitOptions } from './group-commit.js'
export { jsonColumn } from './json-column.js'
export { type KeysetPlace, pastPlace, scanList } from './keyset.js'
export { type Leased, LeaseKeeper, type LeaseKeeperOptions, RETRY_AFTER_ERROR_MS } from './lease-keeper.js'
export { likeLiteral } from './like.js'
export { createPgPool, inTransaction, type PgClient, type PgPool } from './pg-pool.js'
export { statement } from './statement.js'
export { isDatabaseUnavailable } from './unavailable.js'
