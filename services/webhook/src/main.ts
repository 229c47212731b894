import { loadEnvOrExit } from '@mailer/config'
import { onShutdown } from '@mailer/observability'
import { start } from './app.js'
import { webhookEnv } from './env.js'

const env = loadEnvOrExit(webhookEnv)
const rt = await start(env)
onShutdown(() => rt.stop(), rt.logger, env.SHUTDOWN_TIMEOUT_SECONDS)
