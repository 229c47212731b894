import {
  constants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
  type Gunzip,
} from 'node:zlib'

type Decompressor = Pick<Gunzip, 'on' | 'end' | 'destroy'>

/** How a decompressor is made: for the body starting with `first`, cut off or not. */
type MakeDecompressor = (first: Buffer, chunkSize: number, cutOff: boolean) => Decompressor

const zlibOptions = (chunkSize: number, cutOff: boolean) => ({
  chunkSize,
  finishFlush: cutOff ? constants.Z_SYNC_FLUSH : constants.Z_FINISH,
})

/**
 * The content codings an answer's excerpt is decoded from. A body cut off (only the first 8 KiB
 * of an answer are read) is flushed as far as it goes instead of failing at its end; a whole one
 * must end properly, or it is corrupt. HTTP's `deflate` is zlib-wrapped, but some servers send raw
 * deflate: told apart by the zlib header.
 */
const DECODERS: Record<string, MakeDecompressor> = {
  gzip: (_, chunkSize, cutOff) => createGunzip(zlibOptions(chunkSize, cutOff)),
  'x-gzip': (_, chunkSize, cutOff) => createGunzip(zlibOptions(chunkSize, cutOff)),
  deflate: (first, chunkSize, cutOff) =>
    first.length >= 2 && (first[0]! & 0x0f) === 8 && ((first[0]! << 8) | first[1]!) % 31 === 0
      ? createInflate(zlibOptions(chunkSize, cutOff))
      : createInflateRaw(zlibOptions(chunkSize, cutOff)),
  br: (_, chunkSize, cutOff) =>
    createBrotliDecompress({
      chunkSize,
      finishFlush: cutOff ? constants.BROTLI_OPERATION_FLUSH : constants.BROTLI_OPERATION_FINISH,
    }),
}

/** `Content-Encoding` as a list of codings, in the order they were applied (`identity` dropped). */
function codings(header: string | string[] | undefined): string[] {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '')
  return value
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity')
}

/**
 * The first `maxBytes` of `input` decompressed, and whether decompressing it failed. The
 * decompressor is destroyed as soon as that many bytes came out, so an answer of a few KiB that
 * would expand to gigabytes (a "zip bomb": brotli packs 128 MiB of one letter in 101 bytes) costs
 * at most one window of work: brotli's ring buffer (16 MiB at most), zlib's `maxBytes`.
 */
function decompress(
  make: MakeDecompressor,
  input: Buffer,
  cutOff: boolean,
  maxBytes: number,
): Promise<{ out: Buffer; failed: boolean }> {
  return new Promise((resolve) => {
    const z = make(input, maxBytes, cutOff)
    const chunks: Buffer[] = []
    let size = 0
    const done = (failed: boolean) => resolve({ out: Buffer.concat(chunks).subarray(0, maxBytes), failed })
    z.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      if (size >= maxBytes) {
        z.destroy()
        done(false)
      }
    })
    z.on('end', () => done(false))
    z.on('error', () => done(true))
    z.end(input)
  })
}

/**
 * What is kept of an answer's body, as bytes: the body itself, or decoded when its
 * `Content-Encoding` is gzip, deflate or br (a receiver's framework compresses its error pages;
 * stored as received they showed as binary garbage in the API and the dashboard). At most
 * `maxBytes` are decompressed, enough for the excerpt. A body in another coding (zstd, compress,
 * several codings stacked), or one that does not decode, is kept as a placeholder naming its
 * coding and size: `[zstd-encoded body, 512 bytes]` (`8192+ bytes` when more was not read).
 * A decoded start followed by corrupt data keeps the decoded start.
 */
export async function answerBytes(
  contentEncoding: string | string[] | undefined,
  body: Buffer,
  complete: boolean,
  maxBytes: number,
): Promise<Buffer | string> {
  const list = codings(contentEncoding)
  if (list.length === 0 || body.length === 0) return body
  const size = `${body.length}${complete ? '' : '+'} bytes`
  const make = list.length === 1 ? DECODERS[list[0]!] : undefined
  if (!make) return `[${list.join(', ')}-encoded body, ${size}]`
  const { out, failed } = await decompress(make, body, !complete, maxBytes)
  if (failed && out.length === 0) return `[${list[0]}-encoded body that does not decode, ${size}]`
  return out
}
