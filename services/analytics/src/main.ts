import { loadEnvOrExit, startOrExit } from '@mailer/config'
import { onShutdown } from '@mailer/observability'
import { start } from './app.js'
import { analyticsEnv } from './env.js'

const env = loadEnvOrExit(analyticsEnv)
const rt = await startOrExit(() => start(env))
onShutdown(() => rt.stop(), rt.logger, env.SHUTDOWN_TIMEOUT_SECONDS)
