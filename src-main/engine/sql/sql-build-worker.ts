/**
 * Worker-thread entry of the SQL build (`sql-build-pool.ts`, issue 16): decodes one segment into
 * row chunks (`segment-rows.ts`), walks one partition's holes (`holes.ts`), or makes the rows of the
 * consumer-group tables (`group-table-rows.ts`) per task, posting its
 * output in pieces and waiting for the building thread to take them (at most `MAX_UNACKED` ahead).
 * Reads only. Built as a main-process entry (`electron.vite.config.ts`: `out/main/sql-build-worker.js`).
 */
import { parentPort } from 'node:worker_threads';
import { KlxError } from '../errors.ts';
import { scanHoles, type OffsetHole } from '../log/holes.ts';
import { PartitionLog } from '../log/partition-log.ts';
import { LogSegment } from '../segment/log-segment.ts';
import { GROUP_ROWS_COLUMNS, RowsRecorder, writeGroupTableRows, type GroupRowsTable } from './group-table-rows.ts';
import { HOLES_PER_MESSAGE, MAX_UNACKED, type FromSqlBuildWorker, type SqlBuildTask, type ToSqlBuildWorker } from './sql-build-pool.ts';
import { chunkTransferList, segmentRowChunks } from './segment-rows.ts';

const port = parentPort;
if (!port) throw new Error('sql-build-worker runs in a worker thread');

/** Pieces posted per task and not yet taken by the building thread. */
const unacked = new Map<number, number>();
let resume: (() => void) | null = null;

/** Posts one piece of output of task `m.id`, then waits while MAX_UNACKED of its pieces are not taken. */
async function post(m: Exclude<FromSqlBuildWorker, { type: 'ready' }>, transfer: ArrayBuffer[] = []): Promise<void> {
  port!.postMessage(m, transfer);
  unacked.set(m.id, (unacked.get(m.id) ?? 0) + 1);
  while (unacked.get(m.id)! > MAX_UNACKED) await new Promise<void>((r) => (resume = r));
}

async function run(id: number, task: SqlBuildTask): Promise<void> {
  if (task.kind === 'segment') {
    const segment = new LogSegment(task.dir, task.baseOffset);
    for (const chunk of segmentRowChunks(segment, task.end, { from: task.from })) await post({ type: 'chunk', id, chunk }, chunkTransferList(chunk));
  } else if (task.kind === 'groups') {
    const logs = task.dirs.map((d) => PartitionLog.open(d));
    const sinks = Object.fromEntries((Object.keys(GROUP_ROWS_COLUMNS) as GroupRowsTable[]).map((t) => [t, new RowsRecorder(t, (chunk) => post({ type: 'rows', id, chunk }))])) as Record<GroupRowsTable, RowsRecorder>;
    let reported = 0;
    await writeGroupTableRows(logs, sinks, {
      onProgress: (p) => {
        sinks.consumer_offsets.bytes += p.done - reported;
        reported = p.done;
      },
    });
    for (const s of Object.values(sinks)) await s.flush();
  } else {
    const log = PartitionLog.open(task.dir);
    let holes: OffsetHole[] = [];
    for await (const h of scanHoles(log)) {
      holes.push(h);
      if (holes.length >= HOLES_PER_MESSAGE) {
        await post({ type: 'holes', id, holes });
        holes = [];
      }
    }
    if (holes.length > 0) await post({ type: 'holes', id, holes });
  }
}

port.on('message', (m: ToSqlBuildWorker) => {
  if (m.type === 'ack') {
    const n = (unacked.get(m.id) ?? 0) - 1;
    if (n <= 0) unacked.delete(m.id);
    else unacked.set(m.id, n);
    const r = resume;
    resume = null;
    r?.();
    return;
  }
  run(m.id, m.task).then(
    () => port.postMessage({ type: 'done', id: m.id } satisfies FromSqlBuildWorker),
    (err: unknown) => {
      const k = err instanceof KlxError ? err : new KlxError('internal', String((err as Error)?.message ?? err));
      port.postMessage({ type: 'error', id: m.id, error: { code: k.code, reason: k.reason, file: k.file, position: k.position } } satisfies FromSqlBuildWorker);
    },
  );
});

port.postMessage({ type: 'ready' } satisfies FromSqlBuildWorker);
