/**
 * Building the offset map of a cleaning round over the dirty section (spec §13.3; Kafka's
 * `Cleaner.buildOffsetMap` and `buildOffsetMapForSegment`).
 *
 * Segments of `[start, end)` (start = firstDirtyOffset, end = firstUncleanableOffset) are read in
 * order, the first from the offset-index position of `start`. Aborted transactions come from the
 * `.txnindex` files (`txn-metadata.ts`); control batches and aborted data batches put nothing. For
 * every other record with a key and offset ≥ start: when the map already holds its maximum number of
 * keys, mapping stops there (even for a key already in the map) and the round will clean only up to
 * the map's latest offset; else `map[key] = offset`. After each batch with lastOffset ≥ start the
 * map's latest offset becomes that lastOffset, and after a segment read to its end it becomes the
 * next segment's base offset − 1 (or end − 1 for the last one).
 *
 * Keys in the active segment (and anywhere at or past `end`) are never mapped, so older copies of a
 * key whose newest value is in the active segment survive the round (B04) — what Kafka does; the
 * issue text's "keys in the active segment count" does not match Kafka's `Cleaner.buildOffsetMap`
 * (it maps up to LogCleanerManager.cleanableOffsets' firstUncleanableOffset).
 *
 * Two threads (issue 16). Reading a segment, checking its CRCs, walking its records and digesting
 * its keys (`map-chunks.ts`) does not depend on the map; only the puts, the transaction state and
 * the stop when the map is full do. So when the caller gives `startWorker`, the dirty section has
 * two segments or more and at least {@link THREADED_MAP_MIN_BYTES}, and a core is free
 * ({@link hasFreeCore}), a worker thread
 * (`map-build-worker.ts`) digests the second and later dirty segments while this thread maps the
 * first one itself (which also hides the thread's start), then this thread applies the worker's
 * chunks in segment order: the same per-batch steps on the same digests as in one thread, so the
 * map's entries, its latestOffset, `full`, the superseded offsets and any error are the same, and a
 * map that fills up stops at the same record (the worker's read-ahead is then thrown away).
 * Bounds: the worker is at most {@link MAX_CHUNKS_AHEAD} chunks (`map-chunks.ts`: ~1.1 MB each;
 * fewer, larger chunks mean fewer hand-overs between the threads) ahead of the puts and reads with
 * the scan's bounded windows; the map itself is the only large
 * buffer (`log.cleaner.dedupe.buffer.size`). Cancelling is checked here as in one thread (every 256
 * batches, and while waiting), and stops the worker. A worker that has not started after
 * {@link WORKER_START_MS} (its entry did not load) or stays silent for {@link WORKER_STALL_MS} is
 * stopped and the rest is read in this thread.
 */
import { availableParallelism, loadavg } from 'node:os';
import { receiveMessageOnPort, MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { KlxError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { stopWorker } from '../sql/duckdb-gate.ts';
import { segmentsInRange } from './cleanable-range.ts';
import type { KeyHashAlgorithm } from './key-hash.ts';
import { errorOf, F_CONTROL, F_ERROR, F_LEGACY, F_NO_CONTROL_TYPE, F_TRANSACTIONAL, INTS, mapChunks, MAX_CHUNKS_AHEAD, type MapChunk, type MapSegmentTask, type MapWorkerMessage, type MapWorkerStart } from './map-chunks.ts';
import type { SkimpyOffsetMap } from './offset-map.ts';
import type { SupersededOffsets } from './superseded-offsets.ts';
import { CleanedTransactionMetadata, collectAbortedTransactions } from './txn-metadata.ts';

/** What building the map did. */
export interface MapBuildResult {
  /** The map filled up before `end`: the round cleans only up to `map.latestOffset + 1`. */
  full: boolean;
  segments: number;
  /** Segments read whole (from byte 0 to the end), so with every CRC checked. */
  verified: Set<bigint>;
  recordsRead: number;
  bytesRead: number;
  /** Dirty segments whose keys a worker thread digested (0 in one thread). */
  segmentsOnWorker: number;
}

/** The map-build worker entry, for its host to start it (`core/entry-worker.ts`: built or from source). */
export const MAP_BUILD_WORKER = { entry: 'map-build-worker', near: import.meta.url } as const;

/** Starts one thread on {@link MAP_BUILD_WORKER}. */
export type StartMapBuildWorker = () => Worker;

/** Dirty bytes from which the map is built on two threads (below, a thread's start costs more than it saves). */
export const THREADED_MAP_MIN_BYTES = 32 * 1024 * 1024;

/** Milliseconds without a chunk after which the worker is given up and the rest is read here. */
export const WORKER_STALL_MS = 30_000;

/** Milliseconds after which a worker that has not started (its entry failed to load, say) is given up. */
export const WORKER_START_MS = 10_000;

/**
 * Whether a core is free for the map-build worker: the 1-minute load average is at most the cores
 * minus one. A worker costs CPU of its own (its start, compiling the read path again in a second
 * V8 isolate, its heap: ~0.5 CPU-second on the 256 MiB bench partition, +37 %); it pays only when it
 * runs beside the putting thread, not when the two share one core's worth of a busy machine
 * (measured: 0.73× the one-thread speed at load 8-9 on 2 cores). `os.loadavg` reads 0 on Windows.
 */
export function hasFreeCore(load: number = loadavg()[0] ?? 0, cores: number = availableParallelism()): boolean {
  return cores >= 2 && load <= cores - 1;
}

/** Options of {@link buildOffsetMap}. */
export interface MapBuildOptions {
  signal?: AbortSignal;
  /** Called with the bytes of each batch read. */
  onBytes?: (n: number) => void;
  /** Receives every offset a put supersedes (`superseded-offsets.ts`). */
  superseded?: SupersededOffsets;
  /** Starts the map-build worker (see the module comment); without it, one thread. */
  startWorker?: StartMapBuildWorker;
  /** Dirty bytes from which the worker is used (default {@link THREADED_MAP_MIN_BYTES}). */
  threadedFromBytes?: number;
  /**
   * `free-core` (default): use the worker only when a core is free ({@link hasFreeCore}); `always`:
   * whenever the other conditions hold (tests, the bench's two-thread variant).
   */
  workerWhen?: 'free-core' | 'always';
  /** Milliseconds without a chunk before the worker is given up (default {@link WORKER_STALL_MS}). */
  workerStallMs?: number;
}

function checkDone(signal: AbortSignal | undefined, log: PartitionLog): void {
  if (signal?.aborted) throw new KlxError('cancelled', 'compaction cancelled while building the offset map: nothing was changed', { file: log.dir });
}

/** Applies chunks to the map in order: the decisions and puts of the one-thread build (see the module comment). */
class ChunkApplier {
  private segment = -1;
  private batchesSinceCheck = 0;
  /** Batches of the current segment applied (to resume it elsewhere). */
  appliedInSegment = 0;
  private readonly txn = new CleanedTransactionMetadata();
  readonly result: MapBuildResult = { full: false, segments: 0, verified: new Set(), recordsRead: 0, bytesRead: 0, segmentsOnWorker: 0 };

  constructor(
    private readonly log: PartitionLog,
    private readonly tasks: readonly MapSegmentTask[],
    private readonly start: bigint,
    private readonly end: bigint,
    private readonly map: SkimpyOffsetMap,
    private readonly opts: MapBuildOptions,
  ) {
    this.txn.addAbortedTransactions(collectAbortedTransactions(log, start, end));
  }

  /**
   * Applies `c`, whose segment index is `c.segment + shift`, skipping its first `skip` batches.
   * @returns false when the map became full (stop).
   * @throws the errors of the one-thread build, `cancelled`.
   */
  apply(c: MapChunk, shift: number, skip = 0): boolean {
    const si = c.segment + shift;
    const map = this.map;
    const result = this.result;
    const superseded = this.opts.superseded;
    if (si !== this.segment) {
      this.segment = si;
      this.batchesSinceCheck = 0;
      this.appliedInSegment = 0;
      result.segments++;
      checkDone(this.opts.signal, this.log);
    }
    const ints = c.ints;
    const longs = c.longs;
    let k = 0;
    for (let i = 0; i < c.batches; i++) {
      const p = i * INTS;
      const flags = ints[p]!;
      const keys = flags & F_ERROR ? 0 : ints[p + 5]!;
      const firstKey = k;
      k += keys;
      if (i < skip) continue;
      this.appliedInSegment++;
      if (++this.batchesSinceCheck >= 256) {
        this.batchesSinceCheck = 0;
        checkDone(this.opts.signal, this.log);
      }
      const size = ints[p + 3]!;
      result.bytesRead += size;
      this.opts.onBytes?.(size);
      const lastOffset = longs[2 * i]!;
      const producerId = longs[2 * i + 1]!;
      const isTransactional = (flags & F_TRANSACTIONAL) !== 0;
      if (flags & F_CONTROL) {
        if (flags & F_ERROR) throw errorOf(c.errors[ints[p + 5]!]!);
        this.txn.onControlBatchRead({ producerId, isTransactional, lastOffset, controlType: flags & F_NO_CONTROL_TYPE ? null : ints[p + 1]! });
        result.recordsRead++;
      } else if (!this.txn.onBatchRead({ producerId, isTransactional, lastOffset })) {
        if (flags & F_ERROR) throw errorOf(c.errors[ints[p + 5]!]!);
        if (!(flags & F_LEGACY)) {
          result.recordsRead += ints[p + 2]!;
          const n = keys;
          const done = firstKey === 0 ? map.putAll(c.digests, c.offsets, n, superseded) : map.putAll(c.digests.subarray(firstKey * 4), c.offsets.subarray(firstKey), n, superseded);
          if (done < n) {
            result.full = true;
            return false;
          }
        } else {
          for (let j = firstKey; j < firstKey + keys; j++) {
            if (map.full) {
              result.recordsRead += c.ordinals[j]!;
              result.full = true;
              return false;
            }
            const prev = map.putHashed(c.digests, c.offsets[j]!, j * 4);
            if (prev >= 0 && superseded) superseded.mark(prev);
          }
          result.recordsRead += ints[p + 2]!;
        }
      } else result.recordsRead += ints[p + 2]!;
      if (lastOffset >= this.start) map.updateLatestOffset(Number(lastOffset));
    }
    if (c.last) {
      if (c.readError) throw errorOf(c.readError);
      const next = si + 1 < this.tasks.length ? this.tasks[si + 1]!.baseOffset : this.end;
      map.updateLatestOffset(Number(next - 1n));
      if (this.tasks[si]!.from === 0) result.verified.add(this.tasks[si]!.baseOffset);
    }
    return true;
  }

  /** The segment being applied (−1 before the first). */
  get currentSegment(): number {
    return this.segment;
  }
}

/** The worker side of a threaded build: starts it, hands out its chunks in order, stops it. */
class WorkerFeed {
  private readonly control = new Int32Array(new SharedArrayBuffer(16));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private taken = 0;

  constructor(start: StartMapBuildWorker, tasks: MapSegmentTask[], startOffset: bigint, keyHash: KeyHashAlgorithm, private readonly stallMs: number) {
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.worker = start();
    this.worker.unref();
    // This thread is blocked while the worker runs, so a worker that fails (an entry that does not
    // load) shows here as silence (see next()); its error event, delivered later, must not become
    // an uncaught exception of this thread.
    this.worker.on('error', () => undefined);
    const msg: MapWorkerStart = { tasks, start: startOffset, keyHash, control: this.control.buffer as SharedArrayBuffer, port: channel.port2 };
    this.worker.postMessage(msg, [channel.port2]);
  }

  /**
   * The next chunk, waiting for it (calling `onWait`, which checks the signal, every 20 ms); null
   * when the worker failed or stayed silent for `stallMs` (the caller reads the rest itself).
   * @throws KlxError `cancelled` (through `onWait`).
   */
  next(onWait: () => void): MapChunk | null {
    const ctl = this.control;
    let since = Date.now();
    for (;;) {
      const seen = Atomics.load(ctl, 0);
      const m = receiveMessageOnPort(this.port);
      if (m) {
        const msg = m.message as MapWorkerMessage;
        Atomics.store(ctl, 1, ++this.taken);
        Atomics.notify(ctl, 1);
        return 'chunk' in msg ? msg.chunk : null;
      }
      onWait();
      if (Atomics.wait(ctl, 0, seen, 20) === 'timed-out' && Atomics.load(ctl, 0) === seen) {
        const limit = Atomics.load(ctl, 3) === 1 ? this.stallMs : Math.min(this.stallMs, WORKER_START_MS);
        if (Date.now() - since > limit) return null;
      } else since = Date.now();
    }
  }

  /** Stops the worker (it may be reading ahead). */
  close(): void {
    Atomics.store(this.control, 2, 1);
    Atomics.notify(this.control, 1);
    this.port.close();
    stopWorker(this.worker).catch(() => undefined);
  }
}

/**
 * Fills `map` from the dirty section `[start, end)` of `log` (see the module comment), on two
 * threads when `opts.startWorker` is given and the section is large enough.
 * @throws KlxError for a damaged segment (see `source-batches.ts`), `cancelled`.
 */
export function buildOffsetMap(log: PartitionLog, start: bigint, end: bigint, map: SkimpyOffsetMap, opts: MapBuildOptions = {}): MapBuildResult {
  map.clear();
  const dirty = segmentsInRange(log, start, end);
  const tasks: MapSegmentTask[] = dirty.map((seg) => ({ file: seg.files.log, baseOffset: seg.baseOffset, from: seg.positionFor(start) }));
  const applier = new ChunkApplier(log, tasks, start, end, map, opts);
  const dirtyBytes = dirty.reduce((a, seg, i) => a + Math.max(0, seg.size - tasks[i]!.from), 0);
  const threaded = opts.startWorker !== undefined && tasks.length >= 2 && dirtyBytes >= (opts.threadedFromBytes ?? THREADED_MAP_MIN_BYTES) && (opts.workerWhen === 'always' || hasFreeCore());
  if (!threaded) {
    for (const c of mapChunks(tasks, start, map.digestInto, false)) if (!applier.apply(c, 0)) return applier.result;
  } else {
    let feed: WorkerFeed | null = null;
    /** Segments mapped here before the worker's: the first one, read while the thread starts. */
    const local = 1;
    try {
      try {
        feed = new WorkerFeed(opts.startWorker!, tasks.slice(local), start, map.keyHash, opts.workerStallMs ?? WORKER_STALL_MS);
      } catch {
        feed = null; // no thread: all in this one
      }
      // The first segment here, while the worker starts and reads the next ones.
      for (const c of mapChunks(tasks.slice(0, local), start, map.digestInto, false)) if (!applier.apply(c, 0)) return applier.result;
      // Where this thread goes on if the worker fails: segment `resumeAt`, after its first `skip` batches.
      let resumeAt = local;
      let skip = 0;
      while (feed && resumeAt < tasks.length) {
        const c = feed.next(() => checkDone(opts.signal, log));
        if (!c) {
          feed.close();
          feed = null;
          break;
        }
        applier.result.segmentsOnWorker = Math.max(applier.result.segmentsOnWorker, c.segment + 1);
        if (!applier.apply(c, local)) return applier.result;
        resumeAt = c.last ? c.segment + local + 1 : c.segment + local;
        skip = c.last ? 0 : applier.appliedInSegment;
      }
      if (resumeAt < tasks.length) {
        for (const c of mapChunks(tasks.slice(resumeAt), start, map.digestInto, false)) {
          const s = c.segment === 0 ? Math.min(skip, c.batches) : 0;
          skip -= s;
          if (!applier.apply(c, resumeAt, s)) return applier.result;
        }
      }
    } finally {
      feed?.close();
    }
  }
  map.flushDeferred();
  return applier.result;
}
