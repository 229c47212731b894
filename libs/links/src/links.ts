import { type LinkKind, type LinkToken, signedLength, TokenSigner } from './token.js'

/** Paths of the public routes the gateway serves (no API key). */
export const LINK_PATHS = {
  open: '/t/o/',
  click: '/t/c/',
  unsubscribe: '/u/',
} as const satisfies Record<LinkKind, string>

export interface LinksConfig {
  /** Base URL the public routes are reachable at, e.g. `https://mail.example.com`. */
  publicUrl: string
  /** TRACKING_SECRET: the HMAC key of every link token. */
  secret: string
}

/** Builds and reads the public tracking and unsubscribe links. */
export class Links {
  readonly publicUrl: string
  private readonly signer: TokenSigner

  constructor(cfg: LinksConfig) {
    this.publicUrl = cfg.publicUrl.replace(/\/+$/, '')
    this.signer = new TokenSigner(cfg.secret)
  }

  openUrl(emailId: string): string {
    return this.url({ kind: 'open', emailId })
  }

  clickUrl(emailId: string, url: string): string {
    return this.url({ kind: 'click', emailId, url })
  }

  unsubscribeUrl(projectId: string, contactId: string): string {
    return this.url({ kind: 'unsubscribe', projectId, contactId })
  }

  url(token: LinkToken): string {
    return `${this.publicUrl}${LINK_PATHS[token.kind]}${this.signer.sign(token)}`
  }

  sign(token: LinkToken): string {
    return this.signer.sign(token)
  }

  /** The token's content, or null for anything not signed by us for `kind`. Never throws. */
  verify<K extends LinkKind>(token: string, kind: K): Extract<LinkToken, { kind: K }> | null {
    return this.signer.verify(token, kind)
  }

  /** True for URLs that already point at our own public routes (never wrapped again). */
  isOwnUrl(url: string): boolean {
    return ownUrlOf(this.publicUrl)(url)
  }
}

/** Links.isOwnUrl for `publicUrl` (no trailing slash), where there is no Links (no secret). */
export const ownUrlOf =
  (publicUrl: string) =>
  (url: string): boolean =>
    url === publicUrl || url.startsWith(`${publicUrl}/`)

/** The length of `Links.url(token)` (ASCII) for `publicUrl` (no trailing slash), without signing it. */
export const linkUrlLength = (publicUrl: string, token: LinkToken): number =>
  publicUrl.length + LINK_PATHS[token.kind].length + signedLength(token)
