/**
 * Whether `s` is over `maxBytes` in UTF-8. A string of at most a third of the limit in UTF-16
 * units cannot be (3 bytes per unit at most), so only longer ones are measured: html is checked
 * so before text is derived from it (about 0.1 s per MB), which the size check would refuse anyway.
 */
export const overBytes = (s: string, maxBytes: number): boolean =>
  s.length * 3 > maxBytes && Buffer.byteLength(s, 'utf8') > maxBytes
