import { newId, type SendEmailInput } from '@mailer/contracts'
import { trackingGrowth } from '@mailer/links'

// Tracking links hold the email's id, which is made after the checks; every id has this length.
const SAMPLE_ID = newId('email')

/**
 * For an email with open or click tracking, how many bytes the dispatcher's tracking will add to
 * `html` (checkSize asks only once the content fits as given); undefined without tracking, so an
 * ordinary send costs no pass over its html.
 */
export function trackingOf(
  html: string,
  input: SendEmailInput,
  publicUrl: string,
): (() => number) | undefined {
  const clicks = input.trackClicks === true
  const opens = input.trackOpens === true
  if (!clicks && !opens) return undefined
  return () => trackingGrowth(html, { publicUrl, emailId: SAMPLE_ID, clicks, opens })
}
