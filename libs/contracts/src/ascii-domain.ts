/**
 * A domain in the form setup stores and DNS and DKIM use: lower-case, an internationalised one
 * as punycode (`bücher.test` → `xn--bcher-kva.test`). Setup takes only that form, so a sender
 * written with the Unicode name is matched to its project's domain, signed with its key and
 * given a Message-ID under it. Plain ASCII, nearly every sender, skips the conversion. The
 * WHATWG URL parser (UTS #46, as browsers) does it, so this lib stays free of Node modules.
 */
export function asciiDomain(domain: string): string {
  const lower = domain.toLowerCase()
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (!/[^\x00-\x7f]/.test(lower) || /[\s/\\?#@:%[\]]/.test(lower)) return lower
  try {
    return new URL(`http://${lower}`).hostname
  } catch {
    return lower
  }
}
