import type { DeliveryRecord, WebhookRecord } from '@mailer/contracts'

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null)

export interface WebhookRow {
  id: string
  url: string
  events: string[]
  enabled: boolean
  createdAt: Date
  updatedAt: Date
}

export function toWebhookRecord(w: WebhookRow): WebhookRecord {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    enabled: w.enabled,
    createdAt: w.createdAt.toISOString(),
    updatedAt: w.updatedAt.toISOString(),
  }
}

export interface DeliveryRow {
  id: string
  webhookId: string
  eventId: string
  eventType: string
  attempt: number
  status: string
  responseCode: number | null
  responseBody: string | null
  nextAttemptAt: Date | null
  createdAt: Date
  completedAt: Date | null
}

export function toDeliveryRecord(d: DeliveryRow): DeliveryRecord {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    attempt: d.attempt,
    status: d.status as DeliveryRecord['status'],
    responseCode: d.responseCode,
    responseBody: d.responseBody,
    nextAttemptAt: iso(d.nextAttemptAt),
    createdAt: d.createdAt.toISOString(),
    completedAt: iso(d.completedAt),
  }
}
