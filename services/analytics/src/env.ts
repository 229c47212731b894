import { baseEnv, envInt, parseEnv } from '@mailer/config'
import type { z } from 'zod'
import { DEFAULT_MAX_DIMENSION_VALUES } from './domain/dimension-cap.js'

export const analyticsEnv = baseEnv
  .extend({
    /** Most events written in one transaction. */
    ANALYTICS_BATCH_SIZE: envInt(200, 1, 1000),
    /** Longest an event waits for its batch to fill before it is written anyway. */
    ANALYTICS_BATCH_WAIT_MS: envInt(50, 1, 10_000),
    /**
     * JetStream ack wait of the ingest consumer: how long the events a crashed replica had pulled
     * wait before another replica counts them. Events in hand are kept by heartbeats however long
     * their batch takes, so it only has to outlast a crash's detection, not the work.
     */
    ANALYTICS_ACK_WAIT_SECONDS: envInt(10, 1, 3600),
    /**
     * How long idempotency keys are kept. Must outlive the EVENTS stream's 7-day max age, so
     * that no message still in the stream can be counted twice.
     */
    ANALYTICS_DEDUPE_RETENTION_DAYS: envInt(14, 1, 3650),
    /**
     * Most distinct values (tags, bounced domains) kept per project, UTC day and kind; further
     * values count under one `(other)` row, so a tag per order or user cannot make a row per email.
     */
    ANALYTICS_MAX_DIMENSION_VALUES: envInt(DEFAULT_MAX_DIMENSION_VALUES, 10, 100_000),
    /** How often the idempotency keys older than the retention are deleted. */
    ANALYTICS_PRUNE_INTERVAL_SECONDS: envInt(3600, 10, 86_400),
  })
  .superRefine((env, ctx) => {
    if (env.ANALYTICS_DEDUPE_RETENTION_DAYS < 8) {
      ctx.addIssue({
        code: 'custom',
        path: ['ANALYTICS_DEDUPE_RETENTION_DAYS'],
        message: 'must be at least 8 (longer than the 7-day age limit of the EVENTS stream)',
      })
    }
  })
export type AnalyticsEnv = z.infer<typeof analyticsEnv>
export const loadEnv = (source: Record<string, string | undefined> = process.env): AnalyticsEnv =>
  parseEnv(analyticsEnv, source)
