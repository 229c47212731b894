import type { NatsConnection } from 'nats'

const enc = new TextEncoder()
const dec = new TextDecoder()

/**
 * Calls a MailerRpc method as an in-cluster client would (`<prefix>.rpc.mailer.<method>`, body
 * `{ project, args }`): resolves with the JSON result, rejects with the error object of a
 * `SERVICE_ERROR:` reply.
 */
export async function mailerRpc(
  nc: NatsConnection,
  prefix: string,
  project: string,
  method: string,
  ...args: unknown[]
): Promise<any> {
  const m = await nc.request(
    `${prefix}.rpc.mailer.${method}`,
    enc.encode(JSON.stringify({ project, args })),
    {
      timeout: 15_000,
    },
  )
  const text = dec.decode(m.data)
  if (text.startsWith('SERVICE_ERROR:')) throw JSON.parse(text.slice('SERVICE_ERROR:'.length))
  return JSON.parse(text)
}
