import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

// What `pnpm --filter @mailer/client build` publishes: JavaScript and declarations that stand alone.
const pkg = fileURLToPath(new URL('..', import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'mailer-client-'))
afterAll(() => rmSync(out, { recursive: true, force: true }))

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  )

describe('the published build', () => {
  it('compiles to ESM with type declarations that import nothing from the workspace', async () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
    execFileSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.build.json'), '--outDir', out], {
      stdio: 'inherit',
    })
    const built = files(out)
    expect(built.map((f) => f.slice(out.length + 1))).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts', 'rpc.d.ts']),
    )
    expect(built.filter((f) => f.endsWith('.test.js'))).toEqual([])
    for (const f of built.filter((x) => /\.(js|d\.ts)$/.test(x))) {
      expect(readFileSync(f, 'utf8'), f).not.toMatch(/from '(@mailer\/|zod|nats)/)
    }
    const mod = await import(pathToFileURL(join(out, 'index.js')).href)
    expect(Object.keys(mod)).toEqual(
      expect.arrayContaining([
        'MailerClient',
        'AdminClient',
        'MailerRpcClient',
        'verifyWebhook',
        'MailerApiError',
      ]),
    )
  }, 60_000)
})
