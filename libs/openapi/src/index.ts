export {
  buildOpenApiDocument,
  type DocumentedOperation,
  type DocumentOptions,
  documentedOperations,
  ErrorBody,
  listKind,
  MIRROR_PREFIX,
  mirrorPath,
  openApiDocument,
  PUBLIC_LINKS,
  toOpenApiPath,
} from './document.js'
