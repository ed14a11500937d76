/**
 * The per-call facts every handler and the session state see (a module of its own so that
 * `session-state.ts` and `types.ts` do not import each other).
 */

/** Per-call facts, given by the transport to `dispatch` and passed on to the handler. */
export interface CallContext {
  /** When true, write methods are refused before their handler runs. */
  readonly readOnly: boolean;
  /**
   * Fixed roots (the bridge's `klx serve DIR`): folders may only be opened inside them and
   * `fs.complete` only lists inside them. Undefined or empty: no fixed root.
   */
  readonly allowedRoots?: readonly string[];
}
