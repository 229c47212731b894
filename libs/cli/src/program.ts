import { Command } from 'commander'

/**
 * commander's usage errors quote what was typed, values included: `--admin-ky=SECRET` came back
 * as `unknown option '--admin-ky=SECRET'` and `--limit SECRET` as `argument 'SECRET' is invalid`,
 * so a key typed next to a typo landed on stderr and in CI logs. This command (and every
 * subcommand made from it) names the option but never its value.
 */
export class CliCommand extends Command {
  override createCommand(name?: string): CliCommand {
    return new CliCommand(name)
  }

  /** Called by commander with the token as typed; suggestions then match the name alone. */
  unknownOption(flag: string): void {
    const name = flag.startsWith('--') ? (flag.split('=')[0] ?? flag) : flag.slice(0, 2)
    // `--json=x`: a known flag that takes no value would read as "unknown option '--json'".
    if (name !== flag && this.knows(name))
      this.error(`error: option '${name}' takes no value`, { code: 'commander.unknownOption' })
    ;(Command.prototype as unknown as { unknownOption(f: string): void }).unknownOption.call(this, name)
  }

  private knows(name: string): boolean {
    for (let cmd: Command | null = this; cmd; cmd = cmd.parent)
      if (cmd.options.some((o) => o.long === name || o.short === name)) return true
    return false
  }

  override error(message: string, options?: { code?: string; exitCode?: number }): never {
    return super.error(
      options?.code === 'commander.invalidArgument' ? withoutValue(message) : message,
      options,
    )
  }
}

/**
 * `error: option '--limit <n>' argument 'SECRET' is invalid. <why>` (or `value 'SECRET' from env
 * …`) keeps the option and the reason (our parsers never quote the value) and drops the value.
 * An argument's value (`tail bogus`) is not an option's and stays. Any other shape, as a later
 * commander might word it, loses everything but the option's flags rather than risk the value.
 */
function withoutValue(message: string): string {
  const option = /^error: option '([^']*)' /.exec(message)
  if (!option) return message
  const end = message.lastIndexOf("' is invalid.")
  const why = end < 0 ? '' : message.slice(end + "' is invalid.".length)
  return `error: option '${option[1]}' has an invalid value.${why}`
}
