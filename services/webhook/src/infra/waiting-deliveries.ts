import type { ClaimedDelivery } from './delivery-store.js'

/** Deliveries claimed (leased) and waiting in memory for a slot of their webhook, oldest first. */
export class WaitingDeliveries {
  private readonly byWebhook = new Map<string, ClaimedDelivery[]>()
  private count = 0

  get size(): number {
    return this.count
  }

  webhooks(): string[] {
    return [...this.byWebhook.keys()]
  }

  /** How many wait, per webhook. */
  perWebhook(): Map<string, number> {
    return new Map([...this.byWebhook].map(([w, q]) => [w, q.length]))
  }

  push(row: ClaimedDelivery): void {
    const q = this.byWebhook.get(row.webhookId) ?? []
    q.push(row)
    this.byWebhook.set(row.webhookId, q)
    this.count++
  }

  /** The webhook's oldest waiting delivery, taken out. */
  shift(webhookId: string): ClaimedDelivery | undefined {
    const q = this.byWebhook.get(webhookId)
    const row = q?.shift()
    if (!row) return undefined
    this.count--
    if (q!.length === 0) this.byWebhook.delete(webhookId)
    return row
  }

  /** Takes out `row` if it waits here. */
  remove(row: ClaimedDelivery): void {
    this.takeWhere((x) => x === row)
  }

  /** Takes out every waiting delivery `goes` picks (all of them without it). */
  takeWhere(goes: (row: ClaimedDelivery) => boolean = () => true): ClaimedDelivery[] {
    const taken: ClaimedDelivery[] = []
    for (const [w, q] of this.byWebhook) {
      const keep = q.filter((x) => !goes(x))
      if (keep.length === q.length) continue
      for (const x of q) if (goes(x)) taken.push(x)
      if (keep.length > 0) this.byWebhook.set(w, keep)
      else this.byWebhook.delete(w)
    }
    this.count -= taken.length
    return taken
  }
}
