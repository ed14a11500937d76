/**
 * Exit codes as the README states them (fresh tester's finding): a refusal of what was asked exits 2, also when
 * it is one partition's outcome of `klx retention` / `klx compact`; an error about the data exits 1.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOfErrors, isRefusal } from '../../src-main/cli/exit-codes.ts';
import { tempDir } from '../support/log-builder.ts';
import { describeRealData, REAL_DATA } from '../support/real-data.ts';
import { klx } from '../support/klx-cli.ts';

describe('exit codes of per-partition errors', () => {
  it('all refusals: 2; any error about the data: 1; none: 0; a refusal asking for a repair first: 1', () => {
    expect(exitCodeOfErrors([])).toBe(0);
    expect(exitCodeOfErrors([{ code: 'invalid-config' }, { code: 'invalid-argument' }])).toBe(2);
    expect(exitCodeOfErrors([{ code: 'invalid-config' }, { code: 'corrupt-batch' }])).toBe(1);
    expect(isRefusal({ code: 'invalid-argument', details: { needsRepair: true } })).toBe(false);
    expect(exitCodeOfErrors([{ code: 'locked' }])).toBe(1);
  });
});

describeRealData('klx retention refusing DeleteRecords on a compacted topic', () => {
  it('exits 2 (text and --json), naming the refusal', () => {
    const dir = join(tempDir('klx-exit-'), '__consumer_offsets-0');
    cpSync(join(REAL_DATA, 'kafka-2.7.1-compacted-offsets', '__consumer_offsets-0'), dir, { recursive: true });
    const text = klx('retention', dir, '--delete-before-offset', '2', '--dry-run');
    expect(text.status).toBe(2);
    expect(text.stdout).toContain('__consumer_offsets-0: NOT DONE (invalid-config): ');
    expect(text.stderr).toBe('klx: 1 partition(s) not done: __consumer_offsets-0 (invalid-config)\n');
    const json = klx('retention', dir, '--delete-before-offset', '2', '--dry-run', '--json');
    expect(json.status).toBe(2);
    expect(JSON.parse(json.stdout).partitions[0].error).toMatchObject({ code: 'invalid-config', details: { cleanupPolicy: 'compact', requested: '2' } });
    // A bad value is commander's usage error: 2 as well.
    expect(klx('retention', dir, '--delete-before-offset', 'x', '--dry-run').status).toBe(2);
  });
});
