export { eventGroupsCte } from './event-groups-sql.js'
export type { EmailSummary, NewEvent } from './events.js'
export { buildEvent, eventMessage, isPublished, recordEvents, timelineRow } from './events.js'
export type { EmailStatus, RecipientStatus } from './status.js'
export {
  advanceRecipient,
  deriveEmailStatus,
  EMAIL_STATUSES,
  isCancelable,
  isTerminalRecipient,
} from './status.js'
