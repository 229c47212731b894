import { ROUTES } from '@mailer/contracts'
import { describe, expect, it } from 'vitest'
import { buildOpenApiDocument, documentedOperations, listKind, toOpenApiPath } from './document.js'

const doc = buildOpenApiDocument() as any

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with both bearer schemes', () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.components.securitySchemes.projectKey).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.components.securitySchemes.adminKey).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it('describes every catalog route, its admin mirror, /health, /openapi.json and the public links, and nothing else', () => {
    const ops = documentedOperations(ROUTES)
    const inDoc = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
    )
    expect(inDoc.sort()).toEqual(ops.map((o) => `${o.method} ${toOpenApiPath(o.path)}`).sort())
    expect(ops.filter((o) => o.auth === 'none').map((o) => `${o.method} ${o.path}`)).toEqual([
      'GET /health',
      'GET /t/o/:token',
      'GET /t/c/:token',
      'GET /u/:token',
      'POST /u/:token',
    ])
  })

  it('secures project routes with the project key, admin and mirror routes with the admin key', () => {
    expect(doc.paths['/v1/me'].get.security).toEqual([{ projectKey: [] }])
    expect(doc.paths['/v1/admin/projects'].post.security).toEqual([{ adminKey: [] }])
    expect(doc.paths['/v1/admin/projects/{slug}/webhooks'].get.security).toEqual([{ adminKey: [] }])
    expect(doc.paths['/health'].get.security).toEqual([])
    expect(doc.paths['/openapi.json'].get.security).toEqual([{ projectKey: [] }, { adminKey: [] }])
  })

  it('wraps list answers as the catalog says', () => {
    const hooks = doc.paths['/v1/webhooks'].get.responses['200'].content['application/json'].schema
    expect(Object.keys(hooks.properties)).toEqual(['data'])
    const events = doc.paths['/v1/events'].get.responses['200'].content['application/json'].schema
    expect(Object.keys(events.properties).sort()).toEqual(['data', 'nextCursor'])
    for (const r of ROUTES) if (r.method !== 'GET') expect(listKind(r), r.path).toBeUndefined()
  })

  it('resolves every $ref to a component, recursive schemas (z.json) included', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
      (m) => m[1]!,
    )
    for (const name of refs) expect(doc.components.schemas[name], name).toBeDefined()
    expect(JSON.stringify(doc)).not.toContain('#/$defs/')
  })

  it('documents path parameters, query parameters, bodies and success statuses', () => {
    const create = doc.paths['/v1/admin/projects'].post
    expect(create.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['slug', 'name']),
    )
    expect(Object.keys(create.responses)).toContain('201')
    const mirror = doc.paths['/v1/admin/projects/{slug}/webhooks/{id}'].patch
    expect(
      mirror.parameters
        .filter((p: any) => p.in === 'path')
        .map((p: any) => p.name)
        .sort(),
    ).toEqual(['id', 'slug'])
    const events = doc.paths['/v1/events'].get
    expect(events.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'type']),
    )
  })
})
