import type { PreparedSend } from '../../services/email/src/domain/prepare.js'

/**
 * A send past every check, as the accept path hands it to its store (accept-store.ts), for tests
 * that call the store directly: one recipient, a subject and a text, nothing else unless `over`
 * says so.
 */
export const preparedSend = (over: Partial<PreparedSend> = {}): PreparedSend =>
  ({
    input: {},
    from: 'a@locks.test',
    recipients: [{ address: 'b@example.com', kind: 'to' }],
    subject: 'Hi',
    html: null,
    text: 'x',
    headers: {},
    attachments: [],
    scheduledAt: null,
    template: null,
    templateVersion: null,
    hash: 'h',
    ...over,
  }) as PreparedSend
