import { loadEnvOrExit, startOrExit } from '@mailer/config'
import { onShutdown } from '@mailer/observability'
import { start } from './app.js'
import { broadcastEnv } from './env.js'

const env = loadEnvOrExit(broadcastEnv)
const rt = await startOrExit(() => start(env))
onShutdown(() => rt.stop(), rt.logger, env.SHUTDOWN_TIMEOUT_SECONDS)
