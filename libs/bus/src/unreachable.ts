import { MailerError } from '@mailer/contracts'

/**
 * The 503 `service_unavailable` of a request no service answered: no responder, no reply in
 * time, or this connection to NATS down. It crosses HTTP like any other 503; the class tells it
 * apart from a `service_unavailable` a responder sent (its database away), for a caller whose
 * fallback is only sound while the service itself is out of reach (the gateway's verified keys).
 */
export class Unreachable extends MailerError {
  constructor(message: string) {
    super('service_unavailable', message)
  }
}
