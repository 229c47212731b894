import fc from 'fast-check'

/**
 * `fc.assert` with a report that fits on a screen: the failing request as the property described
 * it (its own message, already cut to size), the seed and path that replay it, and no dump of the
 * generated values, whose overlong segments and bodies are thousands of characters each.
 */
export async function checkProperty<T>(
  property: fc.IAsyncPropertyWithHooks<T>,
  params: fc.Parameters<T> = {},
): Promise<void> {
  const out = await fc.check(property, params)
  if (!out.failed) return
  const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance)
  throw new Error(
    `property failed after ${out.numRuns} runs (${out.numShrinks} shrinks); replay with { seed: ${out.seed}, path: "${out.counterexamplePath}" }\n${cause}`,
  )
}
