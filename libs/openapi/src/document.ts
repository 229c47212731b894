import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi'
import { ROUTES, type RouteDef } from '@mailer/contracts'
import { z } from 'zod'
import { queryParameters, zodJsonSchema } from './json-schema.js'

/** Where the admin mirror serves a project route (`/v1/emails` → `/v1/admin/projects/:slug/emails`). */
export const MIRROR_PREFIX = '/v1/admin/projects/:slug'
export const mirrorPath = (path: string): string => `${MIRROR_PREFIX}${path.slice('/v1'.length)}`

/** `/v1/emails/:id` → `/v1/emails/{id}` */
export const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z]+)/g, '{$1}')

/** The wrapper a list route answers with (see RouteDef.list); undefined for single objects. */
export function listKind(route: RouteDef): 'all' | 'page' | undefined {
  if (route.list) return route.list
  const shape = route.method === 'GET' && route.query instanceof z.ZodObject ? route.query.shape : undefined
  return shape && 'cursor' in shape ? 'page' : undefined
}

export const ErrorBody = z.object({
  error: z.object({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    param: z.string().optional().describe('The offending parameter (dotted path) or address'),
  }),
})

export const HealthBody = z.object({ ok: z.boolean() })

/**
 * The public tracking and unsubscribe links (contract.md part 5): no key, not in the catalog
 * (the gateway serves them itself). A bad or tampered token is a 404 HTML page.
 */
export const PUBLIC_LINKS: {
  method: RouteDef['method']
  path: string
  id: string
  summary: string
  ok: [number, string, string]
}[] = [
  {
    method: 'GET',
    path: '/t/o/:token',
    id: 'public.open',
    summary: 'Open pixel: records the first open',
    ok: [200, 'image/gif', 'A 1×1 GIF (Cache-Control: no-store)'],
  },
  {
    method: 'GET',
    path: '/t/c/:token',
    id: 'public.click',
    summary: 'Click: records it and redirects to the original URL',
    ok: [302, 'text/plain', 'Redirect to the link target'],
  },
  {
    method: 'GET',
    path: '/u/:token',
    id: 'public.unsubscribePage',
    summary: 'Unsubscribe confirmation page',
    ok: [200, 'text/html', 'The confirmation page'],
  },
  {
    method: 'POST',
    path: '/u/:token',
    id: 'public.unsubscribe',
    summary: 'One-click unsubscribe (RFC 8058 List-Unsubscribe-Post)',
    ok: [200, 'text/html', 'Unsubscribed (JSON when asked for)'],
  },
]

export interface DocumentOptions {
  routes?: readonly RouteDef[]
  /** `servers[0].url`; left out when unknown (the document is then relative to where it is served). */
  serverUrl?: string
  version?: string
}

export interface DocumentedOperation {
  method: RouteDef['method']
  /** Express-style (`:id`), as the gateway registers it. */
  path: string
  /** `any`: either key (GET /openapi.json, a document about the API rather than an operation). */
  auth: 'none' | 'any' | 'project' | 'admin'
}

/** Every operation the document describes: the catalog, its admin mirror, and the public routes. */
export function documentedOperations(routes: readonly RouteDef[] = ROUTES): DocumentedOperation[] {
  const out: DocumentedOperation[] = [
    { method: 'GET', path: '/health', auth: 'none' },
    { method: 'GET', path: '/openapi.json', auth: 'any' },
    ...PUBLIC_LINKS.map((l) => ({ method: l.method, path: l.path, auth: 'none' as const })),
  ]
  for (const r of routes) {
    out.push({ method: r.method, path: r.path, auth: r.auth })
    if (r.auth === 'project' && r.mirror)
      out.push({ method: r.method, path: mirrorPath(r.path), auth: 'admin' })
  }
  return out
}

function paramsSchema(path: string): z.ZodObject | undefined {
  const names = [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!)
  if (names.length === 0) return undefined
  return z.object(Object.fromEntries(names.map((n) => [n, z.string()])))
}

function successSchema(route: RouteDef): z.ZodType {
  const item = route.response ?? z.object({}).catchall(z.unknown())
  const kind = listKind(route)
  if (kind === 'all') return z.object({ data: z.array(item) })
  if (kind === 'page') return z.object({ data: z.array(item), nextCursor: z.string().nullable() })
  return item
}

const json = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } })

type Scope = 'project' | 'admin' | 'mirror'

/**
 * One operation. `json` mode hands the generator zod's own JSON Schema instead of the zod
 * schemas, for routes whose schemas the generator cannot walk.
 */
function operation(route: RouteDef, path: string, scope: Scope, json?: OpenAPIRegistry): RouteConfig {
  const [, service = 'api'] = route.subject.split('.')
  const operationId = `${scope === 'mirror' ? 'mirror.' : ''}${route.subject.replace(/^api\./, '')}`
  const prefix = operationId.replace(/[^A-Za-z0-9]+/g, '_')
  const schema = (s: z.ZodType, io: 'input' | 'output', part: string) =>
    json ? zodJsonSchema(s, io, `${prefix}_${part}`, json) : s
  const body = (s: z.ZodType, io: 'input' | 'output', part: string) => ({
    content: { 'application/json': { schema: schema(s, io, part) } },
  })
  const status = typeof route.status === 'number' ? String(route.status) : route.status ? '2XX' : '200'
  const responses: RouteConfig['responses'] = {
    [status]: {
      description:
        typeof route.status === 'function' ? 'Success; the status depends on the result' : 'Success',
      ...body(successSchema(route), 'output', 'response'),
    },
    401: { description: 'Missing, invalid, revoked or expired key', ...body(ErrorBody, 'output', 'error') },
    default: { description: 'Error (contract.md part 0)', ...body(ErrorBody, 'output', 'error') },
  }
  const request: NonNullable<RouteConfig['request']> = {}
  const params = paramsSchema(path)
  if (params) request.params = params
  const parameters: Record<string, unknown>[] = (route.headers ?? []).map((h) => ({
    name: h,
    in: 'header',
    required: false,
    schema: { type: 'string' },
  }))
  if (route.query instanceof z.ZodObject) {
    if (json)
      parameters.push(...queryParameters(zodJsonSchema(route.query, 'input', `${prefix}_query`, json)))
    else request.query = route.query
  }
  const documented = route.documentedBody ?? route.body
  if (documented) request.body = { required: true, ...body(documented, 'input', 'body') }
  return {
    method: route.method.toLowerCase() as RouteConfig['method'],
    path: toOpenApiPath(path),
    operationId,
    summary: route.summary,
    ...(scope === 'mirror'
      ? {
          description:
            'Admin mirror of the project route: the project comes from `slug`; acts live without an API key.',
        }
      : {}),
    tags: [scope === 'project' ? service : 'admin'],
    security: [{ [scope === 'project' ? 'projectKey' : 'adminKey']: [] }],
    request,
    ...(parameters.length > 0 ? { parameters: parameters as unknown as RouteConfig['parameters'] } : {}),
    responses,
  }
}

/**
 * The generator overflows its stack on recursive schemas (`z.json()`, `z.lazy`), so a route
 * holding one is described from zod's own JSON Schema instead.
 */
function hasLazy(schema: unknown, seen = new Set<unknown>()): boolean {
  if (!isZod(schema) || seen.has(schema)) return false
  seen.add(schema)
  const def = (schema as { _zod: { def: Record<string, unknown> } })._zod.def
  if (def.type === 'lazy') return true
  for (const value of Object.values(def)) {
    const children = Array.isArray(value)
      ? value
      : isZod(value)
        ? [value]
        : value && typeof value === 'object'
          ? Object.values(value)
          : []
    if (children.some((c) => hasLazy(c, seen))) return true
  }
  return false
}
const isZod = (v: unknown): boolean => typeof v === 'object' && v !== null && '_zod' in v

function register(registry: OpenAPIRegistry, route: RouteDef, path: string, scope: Scope): void {
  const schemas = [route.body, route.documentedBody, route.query, route.response]
  const recursive = schemas.some((schema) => hasLazy(schema))
  registry.registerPath(operation(route, path, scope, recursive ? registry : undefined))
}

/** The OpenAPI 3.1 document of the REST API, generated from the route catalog's zod schemas. */
export function buildOpenApiDocument(opts: DocumentOptions = {}): Record<string, unknown> {
  const routes = opts.routes ?? ROUTES
  const registry = new OpenAPIRegistry()
  registry.registerComponent('securitySchemes', 'projectKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'A project API key: `fs_live_` or `fs_test_` followed by 32 letters and digits',
  })
  registry.registerComponent('securitySchemes', 'adminKey', {
    type: 'http',
    scheme: 'bearer',
    description: "The deployment's ADMIN_API_KEY (only /v1/admin/*)",
  })
  registry.registerPath({
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'One database query; { ok: true } on success, 503 { ok: false } otherwise',
    tags: ['public'],
    security: [],
    responses: {
      200: { description: 'Healthy', ...json(HealthBody) },
      503: { description: 'Database unreachable', ...json(HealthBody) },
    },
  })
  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document (any working key: a project key or the admin key)',
    tags: ['public'],
    security: [{ projectKey: [] }, { adminKey: [] }],
    responses: {
      200: {
        description: 'OpenAPI 3.1 document',
        ...json(z.object({ openapi: z.string() }).catchall(z.unknown())),
      },
      401: { description: 'Missing, invalid, revoked or expired key', ...json(ErrorBody) },
      default: { description: 'Error (contract.md part 0)', ...json(ErrorBody) },
    },
  })
  for (const link of PUBLIC_LINKS) {
    const [status, type, description] = link.ok
    registry.registerPath({
      method: link.method.toLowerCase() as RouteConfig['method'],
      path: toOpenApiPath(link.path),
      operationId: link.id,
      summary: link.summary,
      tags: ['public'],
      security: [],
      request: { params: paramsSchema(link.path)! },
      responses: {
        [status]: { description, content: { [type]: { schema: { type: 'string' } } } },
        404: {
          description: 'Unknown or tampered token (an HTML page)',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
      },
    })
  }
  for (const route of routes) {
    register(registry, route, route.path, route.auth)
    if (route.auth === 'project' && route.mirror) register(registry, route, mirrorPath(route.path), 'mirror')
  }
  const generator = new OpenApiGeneratorV31(registry.definitions)
  const doc = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Mailer API',
      version: opts.version ?? '1.0.0',
      description:
        'Self-hosted transactional email. Every error answers `{ error: { type, code, message, param? } }` and every response carries `X-Request-Id`.',
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
  })
  return doc as unknown as Record<string, unknown>
}

let cached: Record<string, unknown> | undefined

/** The document of the service's own catalog, built once per process. */
export function openApiDocument(): Record<string, unknown> {
  cached ??= buildOpenApiDocument()
  return cached
}
