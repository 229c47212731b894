/** n / sent rounded to 4 decimals; `null` when nothing was sent (contract.md part 5). */
export function rate(n: number, sent: number): number | null {
  if (sent <= 0) return null
  return Math.round((n / sent) * 10_000) / 10_000
}
