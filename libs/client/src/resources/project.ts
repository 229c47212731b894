import { paginate, type Scope } from '../scope.js'
import type { RequestOptions } from '../transport.js'
import type { Domain } from '../types/admin.js'
import type { DataList, Page, PageQuery } from '../types/common.js'
import type {
  Analytics,
  AnalyticsQuery,
  CreateWebhookInput,
  DeletedWebhook,
  EventsQuery,
  MailerEvent,
  UpdateWebhookInput,
  Webhook,
  WebhookDelivery,
  WebhookWithSecret,
} from '../types/webhooks.js'

const id = (webhookId: string) => ({ id: webhookId })

export class Webhooks {
  constructor(private readonly s: Scope) {}

  /** The answer carries `secret`, shown only here and by `rotateSecret`. */
  create(input: CreateWebhookInput, opts?: RequestOptions): Promise<WebhookWithSecret> {
    return this.s.call('webhooks.create', undefined, { ...opts, body: input })
  }

  list(opts?: RequestOptions): Promise<DataList<Webhook>> {
    return this.s.call('webhooks.list', undefined, opts)
  }

  /** One webhook, without its secret. */
  get(webhookId: string, opts?: RequestOptions): Promise<Webhook> {
    return this.s.call('webhooks.get', id(webhookId), opts)
  }

  update(webhookId: string, input: UpdateWebhookInput, opts?: RequestOptions): Promise<Webhook> {
    return this.s.call('webhooks.update', id(webhookId), { ...opts, body: input })
  }

  delete(webhookId: string, opts?: RequestOptions): Promise<DeletedWebhook> {
    return this.s.call('webhooks.delete', id(webhookId), opts)
  }

  /** A new signing secret; the old one stops working at once. */
  rotateSecret(webhookId: string, opts?: RequestOptions): Promise<WebhookWithSecret> {
    return this.s.call('webhooks.rotateSecret', id(webhookId), opts)
  }

  /** Delivery attempts, newest first. */
  deliveries(
    webhookId: string,
    query: PageQuery = {},
    opts?: RequestOptions,
  ): Promise<Page<WebhookDelivery>> {
    return this.s.call('webhooks.deliveries', id(webhookId), { ...opts, query: { ...query } })
  }

  /** Delivers a synthetic, signed `email.delivered` event with `data.test: true`. */
  test(webhookId: string, opts?: RequestOptions): Promise<{ deliveryId: string }> {
    return this.s.call('webhooks.test', id(webhookId), opts)
  }

  /** Redelivers a delivery now. */
  retryDelivery(webhookId: string, deliveryId: string, opts?: RequestOptions): Promise<WebhookDelivery> {
    return this.s.call('webhooks.retryDelivery', { id: webhookId, deliveryId }, opts)
  }
}

export class Events {
  constructor(private readonly s: Scope) {}

  /** Events as webhooks receive them, newest first. */
  list(query: EventsQuery = {}, opts?: RequestOptions): Promise<Page<MailerEvent>> {
    return this.s.call('events.list', undefined, { ...opts, query: { ...query } })
  }

  iterate(query: EventsQuery = {}, opts?: RequestOptions): AsyncGenerator<MailerEvent> {
    return paginate((q, o) => this.list(q, o), query, opts)
  }
}

export class Domains {
  constructor(private readonly s: Scope) {}

  /** The project's sending domains; `refresh: true` re-checks their DNS records first. */
  list(query: { refresh?: boolean } = {}, opts?: RequestOptions): Promise<DataList<Domain>> {
    const q = query.refresh === undefined ? undefined : { refresh: query.refresh ? 'true' : 'false' }
    return this.s.call('domains.list', undefined, { ...opts, query: q })
  }
}

export class AnalyticsResource {
  constructor(private readonly s: Scope) {}

  get(query: AnalyticsQuery = {}, opts?: RequestOptions): Promise<Analytics> {
    return this.s.call('analytics.get', undefined, { ...opts, query: { ...query } })
  }
}
