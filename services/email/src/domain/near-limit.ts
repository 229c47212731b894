/**
 * The projects whose sends read the limit counters before they write. The accept path writes
 * without reading first (the statement itself counts and refuses exactly); a project a limit has
 * refused joins this set, so that while it stays at its limit its requests are refused from the
 * counters as they stood a moment ago and a client hammering past its limit costs no writes. It
 * leaves once such a read finds room for every email of a request. Per replica: another replica
 * finds out with its own first refusal.
 */
export class NearLimit {
  private readonly projects = new Set<string>()

  /** Whether this project's requests read the counters first. */
  has(projectId: string): boolean {
    return this.projects.has(projectId)
  }

  /**
   * After a live request: `refused` whether a limit refused any of its emails (from the read or
   * when storing); `roomRead` whether it read the counters and they admitted every new email.
   */
  observe(projectId: string, outcome: { refused: boolean; roomRead: boolean }): void {
    if (outcome.refused) this.projects.add(projectId)
    else if (outcome.roomRead) this.projects.delete(projectId)
  }
}
