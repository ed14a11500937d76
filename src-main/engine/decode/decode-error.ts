/**
 * The error a decoder throws when bytes do not match the format it reads: the byte position inside
 * the key or value (0-based, in bytes) and a reason a person can act on. The decode layer turns it
 * into a `decodeError` text on the record (never a crash, never a silent fallback); callers that need
 * the record's file and position add them (see `KlxError` in `../errors.ts`).
 */
export class DecodeError extends Error {
  /**
   * @param position byte offset inside the decoded bytes where the problem was found
   * @param reason what was expected and what was found, e.g. `"topic: needs 12 bytes, 3 left"`
   */
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`byte ${position}: ${reason}`);
    this.name = 'DecodeError';
  }
}
