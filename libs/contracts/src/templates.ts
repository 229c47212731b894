import { z } from 'zod'
import { subjectString } from './emails.js'
import { pageQuery } from './pagination.js'

/** Templates are keyed by name within a project (contract.md part 5). */
export const TEMPLATE_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,99}$/
/** A variable: an identifier or a dotted path into nested data (`user.first_name`). */
export const TEMPLATE_VARIABLE_RE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/
export const MAX_TEMPLATE_VARIABLES = 100
/** Characters of one template part (html or text); far above any real email. */
export const MAX_TEMPLATE_PART = 1_000_000

export const templateName = z
  .string()
  .regex(TEMPLATE_NAME_RE, 'name must be 1-100 of a-z, 0-9, _ and -, starting with a letter or digit')

const subject = subjectString()
const part = z.string().min(1).max(MAX_TEMPLATE_PART)
/** A version number: stored as a 4-byte integer, so a larger one can be no version (and failed as 500). */
const version = z.number().int().min(1).max(2_147_483_647)

export const TemplateVariable = z.strictObject({
  name: z
    .string()
    // Checked no further when too long: zod runs later checks after a failed one, and the pattern
    // takes a backtracking frame per `.` segment, a RangeError (a 500) past 6M characters.
    .max(100, { abort: true })
    .regex(TEMPLATE_VARIABLE_RE, 'must be an identifier or a dotted path like user.name'),
  /** A send without a value for a required variable fails with invalid_template_data. */
  required: z.boolean().default(false),
  /** Sample value, used by the render preview when its data leaves the variable out. */
  example: z.json().nullable().default(null),
})
export type TemplateVariable = z.infer<typeof TemplateVariable>

const variables = z
  .array(TemplateVariable)
  .max(MAX_TEMPLATE_VARIABLES)
  .superRefine((list, ctx) => {
    const seen = new Set<string>()
    list.forEach((v, i) => {
      if (seen.has(v.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate variable ${v.name}` })
      seen.add(v.name)
    })
  })

export const CreateTemplateBody = z
  .strictObject({
    name: templateName,
    subject: subject.optional(),
    html: part.optional(),
    text: part.optional(),
    variables: variables.default([]),
  })
  .superRefine((v, ctx) => {
    if (v.html === undefined && v.text === undefined) {
      ctx.addIssue({ code: 'custom', path: ['html'], message: 'one of html or text is required' })
    }
  })
export type CreateTemplateBody = z.infer<typeof CreateTemplateBody>

/**
 * Every PATCH makes a new version. `null` removes a part (a template without text derives it
 * from html). `version`, when given, is the version the change was made from: if the template
 * has moved on since, 409 `template_conflict` instead of overwriting someone else's change.
 */
export const UpdateTemplateBody = z
  .strictObject({
    subject: subject.nullable().optional(),
    html: part.nullable().optional(),
    text: part.nullable().optional(),
    variables: variables.optional(),
    version: version.optional(),
  })
  .refine(
    (v) =>
      v.subject !== undefined || v.html !== undefined || v.text !== undefined || v.variables !== undefined,
    { message: 'nothing to change: give subject, html, text or variables' },
  )
export type UpdateTemplateBody = z.infer<typeof UpdateTemplateBody>

export const RestoreTemplateBody = z.strictObject({ version })

/**
 * The preview's data, kept as given, as a send's is: a record would leave a `__proto__` key out
 * (zod 4 does so without an issue), so the preview of data a send renders (a variable
 * `__proto__.x` reads that key) answered a missing required variable or the example instead.
 * Documented as the object it is.
 */
const previewData = z
  .custom<Record<string, unknown>>(
    (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
    'data must be an object of template variables',
  )
  .meta({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} })

export const RenderTemplateBody = z.strictObject({ data: previewData.optional() })

export const ListTemplatesQuery = pageQuery().extend({
  /** Names containing this text (trimmed: names hold no spaces); one left blank filters nothing. */
  q: z.string().trim().max(100).optional(),
})
export type ListTemplatesQuery = z.infer<typeof ListTemplatesQuery>

export const TemplateVersionsQuery = pageQuery()

export const TemplateRecord = z.object({
  id: z.string(),
  name: z.string(),
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  variables: z.array(TemplateVariable),
  version: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export type TemplateRecord = z.infer<typeof TemplateRecord>

/** A list item: the record without its html and text bodies. */
export const TemplateSummaryRecord = TemplateRecord.omit({ html: true, text: true })
export type TemplateSummaryRecord = z.infer<typeof TemplateSummaryRecord>

export const TemplateVersionRecord = z.object({
  version: z.number().int(),
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  variables: z.array(TemplateVariable),
  createdAt: z.string(),
})
export type TemplateVersionRecord = z.infer<typeof TemplateVersionRecord>

export const RenderedTemplateRecord = z.object({
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
})

export const DeletedTemplate = z.object({ id: z.string(), name: z.string(), deleted: z.literal(true) })

/** email → every email replica, core pub/sub: drop the compiled copy of a changed template. */
export const TemplatesInvalidation = z.object({ projectId: z.string(), name: z.string() })
export type TemplatesInvalidation = z.infer<typeof TemplatesInvalidation>
