import { loadEnvOrExit } from '@mailer/config'
import { onShutdown } from '@mailer/observability'
import { start } from './app.js'
import { authEnv } from './env.js'

const env = loadEnvOrExit(authEnv)
const rt = await start(env)
onShutdown(() => rt.stop(), rt.logger, env.SHUTDOWN_TIMEOUT_SECONDS)
