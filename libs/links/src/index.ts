export { checkLinksEnv, type LinksEnv, linksEnvFields, linksFromEnv } from './env.js'
export { LINK_PATHS, Links, type LinksConfig } from './links.js'
export { type LinkKind, type LinkToken, MAX_TOKEN_LENGTH, TokenSigner } from './token.js'
