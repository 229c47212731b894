// The bench's SMTP sink and webhook receiver, in a process of their own so that the load
// generator (autocannon, in the bench process) never slows down the receiving side. Receipts go to
// the parent over IPC in batches every 100 ms.
import { WebhookReceiver } from './receiver.js'
import { SmtpSink } from './sink.js'

const sink = await SmtpSink.start()
const receiver = await WebhookReceiver.start()
let smtpSent = 0
const hooksSent = new Set<string>()
const sentIds = new Set<string>()

const timer = setInterval(() => {
  const smtp: Array<[string, number]> = []
  for (const [id, at] of sink.received) {
    if (sentIds.has(id)) continue
    sentIds.add(id)
    smtp.push([id, at])
  }
  const hooks: Array<[string, number, number]> = []
  for (const [k, r] of receiver.receipts) {
    if (hooksSent.has(k)) continue
    hooksSent.add(k)
    hooks.push([k, r.createdAt, r.at])
  }
  if (smtp.length || hooks.length || sink.duplicates !== smtpSent) {
    smtpSent = sink.duplicates
    process.send?.({ smtp, hooks, smtpDuplicates: sink.duplicates, hookDuplicates: receiver.duplicates })
  }
}, 100)

process.send?.({ ready: { smtpPort: sink.port, webhookPort: receiver.port } })
process.on('message', async (m: { stop?: boolean }) => {
  if (!m.stop) return
  clearInterval(timer)
  await Promise.all([sink.stop(), receiver.stop()])
  process.exit(0)
})
