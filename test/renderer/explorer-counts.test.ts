/**
 * The explorer store keeps a finished record count when a partition summary read without counting
 * lands after it (CI of stop 26: the header said "records —" on __consumer_offsets-39 because a
 * summary of the selected partition read before `log.countRecords` finished arrived after it), and
 * the header's Reload counts again; a partition whose summary cannot be read says why instead of
 * "checking…" forever (review of stop 26).
 */
import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { PartitionSummary } from '../../src-shared/log-types.ts';
import { KlxApiError } from '../../src-shared/client.ts';

const api: Record<string, (req: unknown) => Promise<unknown>> = {};
vi.mock('../../src-renderer/src/api/client.ts', () => ({ api, client: { on: () => () => undefined } }));

const { useExplorer } = await import('../../src-renderer/src/stores/explorer.ts');
const { useJobs } = await import('../../src-renderer/src/stores/jobs.ts');

const dir = '/data/__consumer_offsets-39';
/** A summary as `log.summaries` and `log.partition` send it: not counted. */
const summary = { dir, name: '__consumer_offsets-39', topic: '__consumer_offsets', partition: 39, kind: 'normal', logStartOffset: '0', logEndOffset: '20', logSize: 1234 } as unknown as PartitionSummary;
const counted = { records: '5', controlRecords: '0', batches: '5', emptyBatches: '0' };

beforeEach(() => {
  setActivePinia(createPinia());
  api['log.partition'] = async () => ({ partition: summary, segments: [] });
});

function setUp(countAnswers: (typeof counted)[]): { explorer: ReturnType<typeof useExplorer>; run: ReturnType<typeof vi.fn> } {
  const explorer = useExplorer();
  const jobs = useJobs();
  const run = vi.fn(async () => countAnswers.shift());
  (jobs as unknown as { run: unknown }).run = run;
  explorer.roots = [{ root: '/data', error: null, logDirs: [{ dir: '/data', partitions: [summary], pending: [] } as never] }];
  explorer.selectedDir = dir;
  return { explorer, run };
}

describe('explorer store: record counts', () => {
  it('a summary without counts that lands after the count keeps records 5', async () => {
    const { explorer } = setUp([counted]);
    await explorer.countRecords(dir);
    expect(explorer.partition?.counts).toEqual(counted);
    await explorer.refreshPartition(); // a summary read before the count finished, landing now
    expect(explorer.partitions[0]!.counts).toEqual(counted);
    expect(explorer.partition?.counts).toEqual(counted);
  });

  it('Reload drops the old count and counts again (4 records after a change)', async () => {
    const { explorer, run } = setUp([counted, { ...counted, records: '4', batches: '4' }]);
    await explorer.countRecords(dir);
    await explorer.reloadSelected();
    await vi.waitFor(() => expect(explorer.partition?.counts?.records).toBe('4'));
    expect(run).toHaveBeenCalledTimes(2);
  });
});

describe('explorer store: a summary that cannot be read', () => {
  it('log.partition failing for a partition still pending sets partitionError (not checking forever); a later read clears it', async () => {
    const explorer = useExplorer();
    const pending = { dir, name: '__consumer_offsets-39', topic: '__consumer_offsets', partition: 39, kind: 'normal' };
    explorer.roots = [{ root: '/data', error: null, logDirs: [{ dir: '/data', partitions: [], pending: [pending] } as never] }];
    explorer.selectedDir = dir;
    api['log.partition'] = async () => {
      throw new KlxApiError({ code: 'not-found', message: `${dir}: no such folder` });
    };
    await explorer.refreshPartition();
    expect(explorer.partition).toBeNull();
    expect(explorer.segmentsChecking).toBe(false);
    expect(explorer.partitionError?.dir).toBe(dir);
    expect(explorer.partitionError?.error.message).toContain('no such folder');
    api['log.partition'] = async () => ({ partition: summary, segments: [] });
    await explorer.refreshPartition();
    expect(explorer.partitionError).toBeNull();
    expect(explorer.partition?.dir).toBe(dir);
  });
});
