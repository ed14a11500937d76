/**
 * `edit.*` handlers: append one producer batch to a partition and roll its active segment, each
 * previewed first (`edit.preview`, `edit.rollPreview`: read-only, no lock) and then carried out
 * with the preview's fingerprint (`edit.append`, `edit.roll`: `write: true`, through
 * `ctx.session.resolveForWriting`, so they need "Open for writing" and a writable window). The
 * work is in `edit-writer.ts`, over the engine's crash-safe `PartitionWriter`.
 *
 * After a change the partition's real folder is announced with a `log.changed` event, so every view
 * showing it reloads. There is no undo for an append: no Kafka request removes records from a log's
 * end (only a follower cuts its own end to match its leader, UnifiedLog.truncateTo). Records leave a
 * log from its start, by retention or DeleteRecords (UnifiedLog.deleteOldSegments,
 * maybeIncrementLogStartOffset: `deleteBeforeOffset` in the Cleanup view), or by compaction.
 */
import { appendPreviewed, previewAppend, previewRoll, rollPreviewed } from './edit-writer.ts';
import { logCacheOf } from '../core/log-cache.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** Builds the `edit.*` handlers. */
export function editHandlers(ctx: ApiContext): DomainHandlers<'edit'> {
  /** After a write: drop the cached read-side snapshot (a roll within one tick of a coarse file-system clock leaves the cache stamp unchanged), then tell the views. */
  const changed = (dir: string, reason: string): void => {
    logCacheOf(ctx).forget(dir);
    ctx.events.emit({ type: 'log.changed', dirs: [dir], reason });
  };
  return {
    /** What the append would do; see `previewAppend`. Errors: path checks, engine refusals (`invalid-record`, repairs needed), limits. */
    'edit.preview': async (req, call) => {
      const dir = await ctx.session.resolve(req.dir, call);
      return previewAppend(dir, req);
    },

    /** Appends the previewed batch. Errors: `read-only`, `locked`, `invalid-argument` (stale preview: `details.stale`), see `appendPreviewed`. */
    'edit.append': async (req, call) => {
      const dir = await ctx.session.resolveForWriting(req.dir, call);
      const result = appendPreviewed(dir, req, req.fingerprint);
      const offsets = result.recordCount === 1 ? `offset ${result.baseOffset}` : `offsets ${result.baseOffset}..${result.lastOffset}`;
      changed(dir, `appended ${result.recordCount} record${result.recordCount === 1 ? '' : 's'} at ${offsets}${result.rolled ? ` (new segment ${result.segmentName})` : ''}`);
      return result;
    },

    /** What rolling the active segment would do. */
    'edit.rollPreview': async (req, call) => previewRoll(await ctx.session.resolve(req.dir, call)),

    /** Rolls the active segment as previewed. Errors: `read-only`, `locked`, `invalid-argument` (stale preview). */
    'edit.roll': async (req, call) => {
      const dir = await ctx.session.resolveForWriting(req.dir, call);
      const result = rollPreviewed(dir, req.fingerprint);
      if (result.rolled) changed(dir, `rolled a new segment ${result.segmentName}`);
      return result;
    },
  };
}
