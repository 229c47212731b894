import { request } from 'node:http'

export interface FuzzRequest {
  method: string
  /** Sent as written: `..`, `%2e%2e`, `%ZZ` and `%00` reach the server untouched (fetch would normalize or escape them). */
  path: string
  /** A list is sent as that many header lines (a duplicated header). */
  headers: Record<string, string | string[]>
  body?: Buffer
  /** Sent with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean
}

export interface FuzzResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any
}

/**
 * One request on its own connection, answered within `deadlineMs` or rejected with "no answer":
 * the property's "never a hang" (a deadline far above any answer, not a timing target). A
 * connection the server closes without an answer rejects too.
 */
export function send(baseUrl: string, req: FuzzRequest, deadlineMs = 15_000): Promise<FuzzResponse> {
  const { hostname, port } = new URL(baseUrl)
  const what = `${req.method} ${req.path.slice(0, 200)}`
  return new Promise((resolve, reject) => {
    const r = request({
      host: hostname,
      port,
      method: req.method,
      path: req.path,
      // Node writes no Content-Length for a DELETE's body by itself: the body would be read as
      // the next request. Headers that name a length or a coding are sent as they are.
      headers:
        req.body &&
        !req.chunked &&
        !('content-length' in req.headers) &&
        !('transfer-encoding' in req.headers)
          ? { ...req.headers, 'content-length': String(req.body.length) }
          : req.headers,
      agent: false,
    })
    const timer = setTimeout(() => {
      r.destroy()
      reject(new Error(`no answer within ${deadlineMs} ms: ${what}`))
    }, deadlineMs)
    r.on('response', (res) => {
      // A HEAD's answer ends with its headers (a refusal written before the method was known
      // may still carry a body, which the client's parser then reports as an error).
      if (req.method === 'HEAD') {
        clearTimeout(timer)
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: undefined })
      }
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        clearTimeout(timer)
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = text ? JSON.parse(text) : undefined
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
      res.on('error', (err) => {
        clearTimeout(timer)
        reject(new Error(`${what}: response broke: ${err.message}`))
      })
    })
    r.on('error', (err) => {
      clearTimeout(timer)
      reject(new Error(`${what}: connection failed without an answer: ${err.message}`))
    })
    if (req.chunked && req.body) {
      r.write(req.body)
      r.end()
    } else r.end(req.body)
  })
}
