/**
 * Runs one deep scan over a partition folder in a fresh process and prints, as one JSON line, its
 * result and the process's RSS growth during it (kernel maxRSS minus the RSS before the scan), for
 * test/engine/log/deep-scan-memory.test.ts: a fresh process has no high-water mark left by earlier
 * work, and the kernel's maxRSS sees the peak of a synchronous decode that no timer could sample.
 *
 * usage: node --import tsx test/support/deep-scan-probe.ts verify|count|search DIR
 */
import { countRecords } from '../../src-main/engine/log/fetch.ts';
import { PartitionLog } from '../../src-main/engine/log/partition-log.ts';
import { verifyPartition } from '../../src-main/engine/log/verify.ts';
import { searchJob } from '../../src-main/api/log/log-search.ts';
import { RecordDecoder } from '../../src-main/engine/decode/record-decoder.ts';

const [op, dir] = process.argv.slice(2) as [string, string];
const log = PartitionLog.open(dir);
const decoder = new RecordDecoder();
const base = process.memoryUsage.rss();
let result: unknown;
if (op === 'verify') {
  const r = await verifyPartition(log, { deep: true });
  result = { records: r.stats.records, errors: r.findings.filter((f) => f.severity === 'error').map((f) => f.reason) };
} else if (op === 'count') {
  const r = await countRecords(log, { fromOffset: 5_000_000n });
  result = { records: r.records, logEndOffset: String(r.logEndOffset) };
} else {
  const job = { jobId: 'probe', signal: new AbortController().signal, progress: () => {} } as unknown as Parameters<typeof searchJob>[2];
  const req = { dirs: [dir], text: 'needle', ignoreCase: true, in: ['key', 'value', 'header'], decoded: false, limit: 100 } as unknown as Parameters<typeof searchJob>[1];
  const r = await searchJob([{ log, decoder }], req, job);
  result = { matches: r.matches.map((m) => String(m.offset)), scannedRecords: r.scannedRecords };
}
const peak = process.resourceUsage().maxRSS * 1024;
console.log(JSON.stringify({ result, growthMiB: Math.round((peak - base) / (1 << 20)) }));
