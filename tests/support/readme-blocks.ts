import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import ts from 'typescript'

/** The ```ts blocks of a Markdown file, in order. */
export function tsBlocks(markdownPath: string): string[] {
  const md = readFileSync(markdownPath, 'utf8')
  return [...md.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

/**
 * Type-checks code blocks as the user's own modules placed at `dir` (so their imports resolve
 * as a project depending on the packages there would), under the repository's compiler options,
 * with `globals` (a script of `declare const …`) for the names a block leaves to the reader: a
 * block's own declaration shadows them. Returns the diagnostics of the blocks, formatted.
 */
export function typecheckBlocks(blocks: string[], dir: string, globals: string, tsconfig: string): string[] {
  const parsed = ts.parseJsonConfigFileContent(
    ts.readConfigFile(tsconfig, ts.sys.readFile).config,
    ts.sys,
    dirname(tsconfig),
  )
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true }
  const files = new Map<string, string>(blocks.map((b, i) => [join(dir, `readme-block-${i + 1}.ts`), b]))
  files.set(join(dir, 'readme-globals.d.ts'), globals)
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f)
  host.readFile = (f) => files.get(f) ?? readFile.call(host, f)
  host.getSourceFile = (f, lang, ...rest) => {
    const text = files.get(f)
    return text === undefined
      ? getSourceFile.call(host, f, lang, ...rest)
      : ts.createSourceFile(f, text, lang, true, ts.ScriptKind.TS)
  }
  const program = ts.createProgram([...files.keys()], options, host)
  const format: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => dir,
    getNewLine: () => '\n',
  }
  return [...files.keys()].flatMap((f) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(f)).map((d) => ts.formatDiagnostic(d, format)),
  )
}

/**
 * A block as an async function over its imports: `import { a, b as c } from 'x'` becomes a read
 * of `modules['x']`, so that it runs with the modules (and stand-ins) a test hands it.
 */
export function runnable(block: string): (modules: Record<string, unknown>) => Promise<void> {
  const js = ts.transpileModule(block, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText
  const body = js.replace(
    /^import \{([^}]*)\} from '([^']+)';?$/gm,
    (_, names: string, from: string) =>
      `const {${names.replace(/\s+as\s+/g, ': ')}} = __modules[${JSON.stringify(from)}];`,
  )
  if (/^\s*import\s/m.test(body)) throw new Error(`an import the runner cannot rewrite:\n${block}`)
  const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
    ...args: string[]
  ) => (modules: Record<string, unknown>) => Promise<void>
  return new AsyncFunction('__modules', body)
}
