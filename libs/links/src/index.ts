export { eachHref, type Href, rewriteHrefs } from './anchors.js'
export { checkLinksEnv, type LinksEnv, linksEnvFields, linksFromEnv } from './env.js'
export { LINK_PATHS, Links, type LinksConfig, linkUrlLength, ownUrlOf } from './links.js'
export { type LinkKind, type LinkToken, MAX_TOKEN_LENGTH, TokenSigner } from './token.js'
export {
  isTrackable,
  MAX_TRACKED_LINKS,
  MAX_TRACKED_URL,
  openPixel,
  trackClicks,
  trackingGrowth,
} from './tracking.js'
