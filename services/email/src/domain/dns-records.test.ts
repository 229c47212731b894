import type { DnsRecord } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import {
  applyLookup,
  buildRecords,
  carryStatuses,
  deriveVerification,
  matchesDmarc,
  matchesSpf,
  PENDING_WINDOW_MS,
  recordKind,
  skipVerification,
  spfValue,
} from './dns-records.js'

const KEY = 'TUlJQklq'

describe('record building', () => {
  it('asks for DKIM, SPF and DMARC TXT records', () => {
    const records = buildRecords('example.com', 'mailer1', KEY, undefined)
    expect(records).toEqual([
      {
        type: 'TXT',
        name: 'mailer1._domainkey.example.com',
        value: `v=DKIM1; k=rsa; p=${KEY}`,
        status: 'pending',
      },
      { type: 'TXT', name: 'example.com', value: 'v=spf1 a mx ~all', status: 'pending' },
      { type: 'TXT', name: '_dmarc.example.com', value: 'v=DMARC1; p=none', status: 'pending' },
    ])
    expect(records.map(recordKind)).toEqual(['dkim', 'spf', 'dmarc'])
  })

  it('uses the configured SPF include', () => {
    expect(spfValue('spf.relay.example')).toBe('v=spf1 include:spf.relay.example ~all')
    expect(buildRecords('a.io', 's', KEY, 'spf.relay.example')[1]!.value).toBe(
      'v=spf1 include:spf.relay.example ~all',
    )
  })
})

describe('SPF matching', () => {
  const include = 'v=spf1 include:spf.relay.example ~all'
  it('accepts one v=spf1 record holding every mechanism asked for', () => {
    expect(matchesSpf(['v=spf1 include:_spf.google.com include:spf.relay.example -all'], include)).toBe(true)
    expect(matchesSpf(['V=SPF1 +INCLUDE:SPF.RELAY.EXAMPLE ?all'], include)).toBe(true)
    expect(matchesSpf(['google-site-verification=x', 'v=spf1 mx a -all'], 'v=spf1 a mx ~all')).toBe(true)
  })

  it('rejects a record without our mechanism, a look-alike, or two SPF records', () => {
    expect(matchesSpf(['v=spf1 include:_spf.google.com ~all'], include)).toBe(false)
    expect(matchesSpf(['v=spf10 include:spf.relay.example'], include)).toBe(false)
    expect(matchesSpf(['v=spf1 mx ~all'], 'v=spf1 a mx ~all')).toBe(false)
    expect(matchesSpf(['v=spf1 include:spf.relay.example ~all', 'v=spf1 a ~all'], include)).toBe(false)
    expect(matchesSpf([], include)).toBe(false)
  })
})

describe('DMARC matching', () => {
  it('accepts any DMARC policy record', () => {
    expect(matchesDmarc(['v=DMARC1; p=none'])).toBe(true)
    expect(matchesDmarc(['v=DMARC1;p=reject; rua=mailto:d@example.com'])).toBe(true)
    expect(matchesDmarc(['v=DMARC1'])).toBe(true)
    expect(matchesDmarc(['v=DMARC2; p=none', 'p=none'])).toBe(false)
  })
})

describe('applying lookups', () => {
  const [dkim, spf] = buildRecords('example.com', 's', KEY, undefined) as [DnsRecord, DnsRecord, DnsRecord]
  it('verifies a matching record and fails a missing or different one', () => {
    expect(applyLookup(dkim, { kind: 'found', txts: [`v=DKIM1; k=rsa; p=${KEY}`] }).status).toBe('verified')
    expect(applyLookup(dkim, { kind: 'found', txts: ['v=DKIM1; k=rsa; p=T1RIRVI='] }).status).toBe('failed')
    expect(applyLookup(spf, { kind: 'missing' }).status).toBe('failed')
  })

  it('keeps the previous status when the lookup got no answer', () => {
    expect(applyLookup({ ...spf, status: 'verified' }, { kind: 'error', code: 'ETIMEOUT' }).status).toBe(
      'verified',
    )
  })

  it('carries statuses only to records whose name and value are unchanged', () => {
    const stored = skipVerification(buildRecords('example.com', 's', KEY, undefined))
    const fresh = buildRecords('example.com', 's', KEY, 'spf.relay.example')
    expect(carryStatuses(fresh, stored).map((r) => r.status)).toEqual(['verified', 'pending', 'verified'])
  })
})

describe('domain verification', () => {
  const created = new Date('2026-01-01T00:00:00Z')
  const soon = new Date(created.getTime() + 3600_000)
  const late = new Date(created.getTime() + PENDING_WINDOW_MS + 1)
  const withStatuses = (dkim: DnsRecord['status'], spf: DnsRecord['status'], dmarc: DnsRecord['status']) => {
    const [a, b, c] = buildRecords('example.com', 's', KEY, undefined) as [DnsRecord, DnsRecord, DnsRecord]
    return [
      { ...a, status: dkim },
      { ...b, status: spf },
      { ...c, status: dmarc },
    ]
  }

  it('is verified when DKIM and SPF are; DMARC is advisory', () => {
    expect(deriveVerification(withStatuses('verified', 'verified', 'failed'), 'pending', created, soon)).toBe(
      'verified',
    )
  })

  it('stays pending while a new domain waits for DNS, then fails', () => {
    expect(deriveVerification(withStatuses('failed', 'verified', 'verified'), 'pending', created, soon)).toBe(
      'pending',
    )
    expect(deriveVerification(withStatuses('failed', 'verified', 'verified'), 'pending', created, late)).toBe(
      'failed',
    )
  })

  it('fails a verified domain whose record disappeared', () => {
    expect(
      deriveVerification(withStatuses('verified', 'failed', 'verified'), 'verified', created, soon),
    ).toBe('failed')
  })

  it('keeps the previous state when lookups proved nothing', () => {
    expect(
      deriveVerification(withStatuses('verified', 'pending', 'pending'), 'verified', created, soon),
    ).toBe('verified')
    expect(deriveVerification(withStatuses('pending', 'pending', 'pending'), 'failed', created, soon)).toBe(
      'failed',
    )
  })
})
