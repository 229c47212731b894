import { loadEnvOrExit, startOrExit } from '@mailer/config'
import { onShutdown } from '@mailer/observability'
import { start } from './app.js'
import { authEnv } from './env.js'

const env = loadEnvOrExit(authEnv)
const rt = await startOrExit(() => start(env))
onShutdown(() => rt.stop(), rt.logger, env.SHUTDOWN_TIMEOUT_SECONDS)
