import { Command } from 'commander'

/**
 * commander's usage errors quote what was typed: `--admin-ky=SECRET` came back as `unknown option
 * '--admin-ky=SECRET'`, `--limit SECRET` as `argument 'SECRET' is invalid`, a key pasted as the
 * command word as `unknown command 'SECRET'` and as a positional as `command-argument value
 * 'SECRET' is invalid`, so a key typed in the wrong place landed on stderr and in CI logs. The
 * rule, for this command and every subcommand made from it: a usage error never quotes a word
 * the user typed, whatever its length or shape (the admin key is the operator's choice, so no
 * shape test can tell a key from a typo). It names the position instead (the option, the
 * argument, the command it belongs to) and what was expected; commander's "Did you mean" hint
 * and the help printed after the error name real commands only.
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
    const code = options?.code
    const safe =
      code === 'commander.invalidArgument'
        ? withoutValue(message, this.path())
        : code === 'commander.unknownCommand'
          ? withoutCommand(message, this.path(), this.commands)
          : message
    return super.error(safe, options)
  }

  /** `mailer projects`: the command as declared, for messages that cannot quote what was typed. */
  private path(): string {
    const names: string[] = []
    for (let cmd: Command | null = this; cmd; cmd = cmd.parent) names.unshift(cmd.name())
    return names.join(' ')
  }
}

/**
 * `error: unknown command 'SECRET'\n(Did you mean projects?)`: keeps the hint, only when it names
 * one of the commands (so that nothing of the typed word can pass for one), and drops the word.
 */
function withoutCommand(message: string, command: string, commands: readonly Command[]): string {
  const hint = /\n\(Did you mean ([\w-]+)\?\)$/.exec(message)
  const known = hint && commands.some((c) => c.name() === hint[1] || c.aliases().includes(hint[1]!))
  return `error: unknown command for '${command}' (what was typed is not shown)${known ? hint[0] : ''}`
}

/**
 * `error: option '--limit <n>' argument 'SECRET' is invalid. <why>` (or `value 'SECRET' from env
 * …`), and `error: command-argument value 'SECRET' is invalid for argument 'what'. <why>`, keep
 * the option or argument and the reason (our parsers and commander's choices never quote the
 * value) and drop the value. Any other shape, as a later commander might word it, loses
 * everything but the option's flags or the command rather than risk the value.
 */
function withoutValue(message: string, command: string): string {
  const option = /^error: option '([^']*)' /.exec(message)
  if (option) {
    const end = message.lastIndexOf("' is invalid.")
    const why = end < 0 ? '' : message.slice(end + "' is invalid.".length)
    return `error: option '${option[1]}' has an invalid value.${why}`
  }
  const marker = "' is invalid for argument '"
  const at = message.lastIndexOf(marker)
  const argument = at < 0 ? null : /^([^']*)'\.(.*)$/s.exec(message.slice(at + marker.length))
  if (message.startsWith('error: command-argument value ') && argument)
    return `error: argument '${argument[1]}' of '${command}' has an invalid value.${argument[2]}`
  return `error: an argument of '${command}' has an invalid value (not shown)`
}
