import { loadEnvOrExit, startOrExit } from '@mailer/config'
import { onShutdown } from '@mailer/observability'
import { start } from './app.js'
import { gatewayEnv } from './env.js'

const env = loadEnvOrExit(gatewayEnv)
const gw = await startOrExit(() => start(env))
onShutdown(() => gw.stop(), gw.rt.logger, env.SHUTDOWN_TIMEOUT_SECONDS)
