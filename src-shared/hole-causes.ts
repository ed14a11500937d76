/**
 * Every cause of an offset hole: the single list the engine's holes walk
 * (`src-main/engine/log/holes.ts`, whose module comment says what each cause means), the wire schema
 * (`log-types.ts`, which re-exports it) and the renderer read.
 *
 * No imports at all (not even zod): the engine loads it without the contract's schemas.
 */

/** Every hole cause, in the order a walk meets them. */
export const HOLE_CAUSES = [
  'below-log-start',
  'compacted-between-batches',
  'compacted-in-batch',
  'control-record',
  'aborted-transaction',
  'empty-batch',
  'missing-segment',
  'corrupt-region',
  'not-checked',
  'truncated-tail',
] as const;

/** One cause of an offset hole. */
export type HoleCause = (typeof HOLE_CAUSES)[number];
