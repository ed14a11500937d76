/**
 * `lessons.*` handlers: the course labs (`engine/lessons/`) played into the app's own data folder —
 * never a user's logs — and run step by step, with every cleaner decision.
 *
 * The lessons live under `<dataDir>/lessons/<labId>` where `dataDir` is `$KLX_DATA_DIR`, else the
 * folder holding the default trash (`~/.local/share/kafka-log-explorer` and its platform
 * equivalents, see `engine/cleaner/trash.ts`). The labs' partitions hold a handful of records, so
 * their plans and runs answer directly instead of going through a worker thread; the offset map
 * is sized to them (1 MiB instead of the cleaner's 128 MiB default; a lab never fills it).
 */
import { dirname } from 'node:path';
import type { CleanerReport } from '../../engine/cleaner/cleaner-plan.ts';
import { defaultTrashDir } from '../../engine/cleaner/trash.ts';
import { createLesson, lessonState, runLessonStep, type LessonState } from '../../engine/lessons/lesson-builder.ts';
import { LABS, type Lab, type LabStep } from '../../engine/lessons/labs.ts';
import type { LabInfoWire, LabStepWire, LessonOutcomeWire, LessonStateWire } from '../../../src-shared/lessons-types.ts';
import { decisionListWire, reportWire } from '../core/cleanup-wire.ts';
import type { ApiContext, DomainHandlers } from '../core/types.ts';

/** Where lessons are created (see the module comment). */
export function lessonsDataDir(): string {
  return process.env.KLX_DATA_DIR ?? dirname(defaultTrashDir());
}

function stepWire(st: LabStep): LabStepWire {
  const r = st.run;
  return {
    id: st.id,
    title: st.title,
    topic: st.topic,
    kind: r.kind,
    now: r.kind === 'query' ? null : String(r.now),
    rules: r.kind === 'compact' ? r.rules : null,
    sql: r.kind === 'query' ? r.sql : [],
    question: st.question,
    answer: st.answer,
  };
}

function labWire(l: Lab): LabInfoWire {
  return { id: l.id, title: l.title, summary: l.summary, steps: l.steps.map(stepWire) };
}

function stateWire(st: LessonState): LessonStateWire {
  return { labId: st.labId, logDir: st.logDir, next: st.next, partitionDir: st.partitionDir };
}

function outcomeWire(report: CleanerReport | undefined, rules: 'kafka' | 'classic' | null): LessonOutcomeWire | null {
  if (!report) return null;
  const d = report.decisions;
  return { rules, report: reportWire(report), decisions: decisionListWire(d) ?? { rows: [], total: 0, summarized: false } };
}

/** Builds the `lessons.*` handlers. */
export function lessonsHandlers(_ctx: ApiContext): DomainHandlers<'lessons'> {
  return {
    /** Every lab with its steps, questions and answers. */
    'lessons.labs': async () => ({ labs: LABS.map(labWire), dataDir: lessonsDataDir() }),
    /** Creates or resets a lesson. Errors: `invalid-argument` (unknown lab), `io-error`. */
    'lessons.create': async (req) => ({ state: stateWire(createLesson(lessonsDataDir(), req.labId)) }),
    /** The lesson as it is on disk, or null. */
    'lessons.state': async (req) => {
      const st = lessonState(lessonsDataDir(), req.labId);
      return { state: st ? stateWire(st) : null };
    },
    /** Previews the current step with its decisions; a compaction step under both rule sets (kafka, classic). */
    'lessons.preview': async (req) => {
      const data = lessonsDataDir();
      const st = lessonState(data, req.labId);
      const step = st?.step;
      if (!st || !step) return { kafka: null, classic: null };
      if (step.run.kind === 'query') return { kafka: null, classic: null };
      if (step.run.kind === 'retention') {
        const r = runLessonStep(data, req.labId, { dryRun: true, explain: {} });
        return { kafka: outcomeWire(r.outcome?.partitions[0]?.report, null), classic: null };
      }
      const k = runLessonStep(data, req.labId, { dryRun: true, explain: {}, rules: 'kafka' });
      const c = runLessonStep(data, req.labId, { dryRun: true, explain: {}, rules: 'classic' });
      return { kafka: outcomeWire(k.outcome?.partitions[0]?.report, 'kafka'), classic: outcomeWire(c.outcome?.partitions[0]?.report, 'classic') };
    },
    /** Runs the current step (its own rules), then writes what the next step needs. */
    'lessons.run': async (req) => {
      const r = runLessonStep(lessonsDataDir(), req.labId, { explain: {} });
      const rules = r.step.run.kind === 'compact' ? r.step.run.rules : null;
      return { outcome: outcomeWire(r.outcome?.partitions[0]?.report, rules), state: stateWire(r.state) };
    },
  };
}
