/**
 * JSON-safe types of the repair methods (`cleanup.repairPlan`, `cleanup.repair`) and of the whole-folder
 * verify (`log.verifyFolder`): the startup recovery plan of `klx repair` (engine
 * `src-main/engine/log/recovery-plan.ts`, Kafka's `LogLoader` / `LogSegment.recover`), one action per
 * row with its files and bytes, each marked as what a broker does at startup (`broker`) or what the
 * user chooses (`choice`: cutting valid batches with "truncate at corruption", rebuilding an index a
 * broker would not touch, rewriting a log-directory checkpoint).
 *
 * Wire conventions (see `wire.ts`): offsets are int64 decimal strings, byte sizes plain numbers,
 * paths absolute. No Node or DOM imports.
 */
import { z } from 'zod';
import { count, int64, pathText } from './wire.ts';

/** The kinds of repair action: the engine's `RecoveryAction` types plus the checkpoint rewrite. */
export const REPAIR_ACTION_TYPES = ['delete-file', 'rename', 'delete-segment', 'rebuild-indexes', 'truncate-log', 'create-segment', 'write-leader-epochs', 'rewrite-checkpoint'] as const;

/** One action of a repair plan. */
export const repairAction = z.object({
  type: z.enum(REPAIR_ACTION_TYPES),
  /** `broker`: what a broker does at startup (Kafka's LogLoader); `choice`: the user's decision, not the broker's. */
  origin: z.enum(['broker', 'choice']),
  /** One line for people: what is done and why (paths relative to the partition folder). */
  text: z.string(),
  /** The files it deletes, replaces, cuts or creates, with their size now in bytes (0 for a file it creates). */
  files: z.array(z.object({ path: z.string(), bytes: count })),
  /** Bytes it takes out of the folder (deleted, replaced or cut); they go to the trash for Undo. */
  bytes: count,
  /** Valid records it drops (cut or deleted segments), 0 for most actions. */
  records: count,
});

/** Something the plan reports but does not change (the engine's `PlanNote`). */
export const repairNote = z.object({
  kind: z.string(),
  file: z.string(),
  position: count.nullable(),
  reason: z.string(),
});

/** A repair plan of one partition folder. */
export const repairPlan = z.object({
  dir: pathText,
  topic: z.string(),
  partition: count,
  cleanShutdown: z.boolean(),
  recoveryPoint: int64.nullable(),
  truncateAtCorruption: z.boolean(),
  logEndOffsetBefore: int64,
  logEndOffsetAfter: int64,
  actions: z.array(repairAction),
  /** Damage the plan leaves in place, with what a broker would do. */
  unresolved: z.array(repairNote),
  /** Where Kafka itself would act differently. */
  notes: z.array(repairNote),
  segmentsScanned: count,
});

/** One partition of a whole-folder verify: its findings counted and what a repair would do. */
export const folderVerifyRow = z.object({
  dir: pathText,
  /** `<topic>-<partition>` (the folder name). */
  name: z.string(),
  errors: count,
  warnings: count,
  infos: count,
  /** The first finding of the worst severity, or null when clean. */
  worst: z.object({ code: z.string(), file: z.string(), position: count.nullable(), reason: z.string() }).nullable(),
  /** The default repair plan (no truncation at corruption): actions a broker does / your choice, damage left. */
  brokerActions: count,
  choiceActions: count,
  unresolved: count,
  /** Reading the partition failed (the message, with file and position); the row's counts are then 0. */
  error: z.string().nullable(),
});

export type RepairAction = z.infer<typeof repairAction>;
export type RepairNote = z.infer<typeof repairNote>;
export type RepairPlanWire = z.infer<typeof repairPlan>;
export type FolderVerifyRow = z.infer<typeof folderVerifyRow>;
