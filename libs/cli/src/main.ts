import { CommanderError } from 'commander'
import { domainCommands } from './commands/domains.js'
import { emailCommands } from './commands/emails.js'
import { projectCommands } from './commands/projects.js'
import { tailCommand } from './commands/tail.js'
import { EXIT, report } from './exit.js'
import { CliCommand } from './program.js'

const program = new CliCommand('mailer')
  .description('Manage a Mailer deployment: projects, keys, domains, suppressions, emails and events')
  .version('0.1.0')
  .option('--url <url>', 'base URL of the deployment (env MAILER_URL, default http://localhost:3000)')
  .option('--admin-key <key>', 'the admin key (env MAILER_ADMIN_KEY)')
  .option('--api-key <key>', 'a project key (env MAILER_API_KEY)')
  .option('--json', 'print JSON for scripts instead of tables')
  .showHelpAfterError()
  .exitOverride()

// `mailer tail … | head -1`: once the reader has gone there is nothing left to print for. Stop
// quietly with 0, as Unix tools do, instead of Node's unhandled EPIPE and its stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') process.stderr.write(`error: cannot write the output: ${err.message}\n`)
  process.exit(err.code === 'EPIPE' ? EXIT.ok : EXIT.api)
})
// stderr is where a failure is told; once its reader has gone (`2>&1 | head -1`, a closed log
// pipe) it cannot be told, and an unhandled EPIPE there ended every command with 1, a usage error
// or an unreachable API included. The exit code is then all that says what happened: keep it.
process.stderr.on('error', () => undefined)

projectCommands(program)
domainCommands(program)
emailCommands(program)
tailCommand(program)

try {
  await program.parseAsync(process.argv)
  process.exitCode = EXIT.ok
} catch (err) {
  if (err instanceof CommanderError) {
    // Help and version end with code 0; every other parse failure is a usage error.
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage
  } else {
    process.exitCode = report(err, Boolean(program.opts().json))
  }
}
