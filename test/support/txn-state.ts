/**
 * A `__transaction_state-3` partition written as a user would: `klx create` + `klx append --records`
 * with key/value bytes from an independent Python encoder of Kafka's TransactionLogKey/Value schemas
 * (test/support/txn_state_records.py): payments-1 Ongoing (v0) → PrepareCommit (v1, nextProducerEpoch 1) → CompleteCommit
 * (v1, previousProducerId 4000), reports-7 Empty (v1, producer id 2^60 + 1, null partitions, unknown tagged field 9 = 0x0102), then its
 * tombstone; offsets 0–4, timestamps 1700000000010..50.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './log-builder.ts';
import { klx } from './klx-cli.ts';
export { klx };
import { REPO_ROOT } from './real-data.ts';

/** Runs the CLI as a user does (node bin/klx.mjs). */

/** Creates the partition in a fresh temp log directory. @returns its folder. @throws Error when a command fails. */
export function transactionStatePartition(): string {
  const root = tempDir('klx-txnstate-');
  const ndjson = join(root, 'records.ndjson');
  writeFileSync(ndjson, execFileSync('/usr/bin/python3', [join(REPO_ROOT, 'test/support/txn_state_records.py')], { encoding: 'utf8' }));
  const dir = join(root, 'logs', '__transaction_state-3');
  for (const args of [['create', dir, '--config', 'cleanup.policy=compact'], ['append', dir, '--records', ndjson]]) {
    const r = klx(...args);
    if (r.status !== 0) throw new Error(`klx ${args[0]} failed: ${r.stderr}`);
  }
  return dir;
}
