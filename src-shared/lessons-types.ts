/**
 * Wire shapes of the `lessons.*` methods (the course labs of `src-main/engine/lessons/`) and of the
 * cleaner's decisions (`src-main/engine/cleaner/decisions.ts`): one row per record, batch or
 * segment a plan touches, with its verdict, reason code and evidence sentence. Offsets are int64
 * decimal strings. No Node or DOM imports.
 */
import { z } from 'zod';
import { cleanupReport, decisionList } from './cleanup-types.ts';
import { count, int64 } from './wire.ts';

export { cleanerDecision, decisionList, type CleanerDecisionWire, type DecisionListWire } from './cleanup-types.ts';

/** One step of a lab. */
export const labStep = z.object({
  id: z.string(),
  title: z.string(),
  topic: z.string(),
  kind: z.enum(['compact', 'retention', 'query']),
  /** The clock of the run, ms (null for a query step). */
  now: int64.nullable(),
  rules: z.enum(['kafka', 'classic']).nullable(),
  /** Query steps: the SQL to try in the SQL view. */
  sql: z.array(z.string()),
  question: z.string(),
  answer: z.string(),
});
export type LabStepWire = z.infer<typeof labStep>;

/** A lab. */
export const labInfo = z.object({ id: z.string(), title: z.string(), summary: z.string(), steps: z.array(labStep) });
export type LabInfoWire = z.infer<typeof labInfo>;

/** A lesson on disk. */
export const lessonStateWire = z.object({
  labId: z.string(),
  /** The lesson's log dir (open it like any log dir). */
  logDir: z.string(),
  /** Index of the step to run next (= number of steps when done). */
  next: count,
  /** The partition folder of that step, null when done. */
  partitionDir: z.string().nullable(),
});
export type LessonStateWire = z.infer<typeof lessonStateWire>;

/** One side of a preview or the result of a run: the report and its decisions. */
export const lessonOutcome = z.object({
  rules: z.enum(['kafka', 'classic']).nullable(),
  report: cleanupReport,
  decisions: decisionList,
});
export type LessonOutcomeWire = z.infer<typeof lessonOutcome>;
