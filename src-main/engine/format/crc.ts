/**
 * Checksums of the format (spec §2.2): CRC-32C for v2 batches and producer snapshots, CRC-32 (IEEE)
 * for v0/v1 messages. Both come from `@node-rs/crc32` (native); Kafka's `Crc32C` and
 * `java.util.zip.CRC32` compute the same values.
 *
 * Speed (x86-64): its CRC-32 uses PCLMULQDQ (crc32fast, ~6–8 GB/s), but its CRC-32C is the `crc32c`
 * crate's table-driven software path (~2.8 GB/s): the prebuilt binary is compiled without SSE4.2,
 * so it has no `crc32` instruction. That is ~0.1 s per 256 MiB scanned, about 40% of a shallow scan.
 */
import { crc32, crc32c as nativeCrc32c } from '@node-rs/crc32';

/** CRC-32C (Castagnoli) of `bytes`, as a uint32. `crc32c("123456789") = 0xE3069283`. */
export function crc32c(bytes: Uint8Array): number {
  return nativeCrc32c(bytes as Buffer) >>> 0;
}

/** CRC-32 (IEEE, zlib) of `bytes`, as a uint32. `crc32ieee("123456789") = 0xCBF43926`. */
export function crc32ieee(bytes: Uint8Array): number {
  return crc32(bytes as Buffer) >>> 0;
}

/** CRC-32C continued over `bytes` from a previous value (0 to start), as a uint32. */
export function crc32cUpdate(bytes: Uint8Array, previous: number): number {
  return nativeCrc32c(bytes as Buffer, previous) >>> 0;
}

/** CRC-32 (IEEE) continued over `bytes` from a previous value (0 to start), as a uint32. */
export function crc32ieeeUpdate(bytes: Uint8Array, previous: number): number {
  return crc32(bytes as Buffer, previous) >>> 0;
}

/** The CRC a batch carries: CRC-32C for magic 2 (`DefaultRecordBatch`), CRC-32 for magic 0/1 (`LegacyRecord`). */
export function crcAlgorithm(magic: number): 'CRC-32C' | 'CRC-32' {
  return magic === 2 ? 'CRC-32C' : 'CRC-32';
}

/**
 * Kafka's words for a CRC mismatch (`DefaultRecordBatch.ensureValid` / `LegacyRecord.ensureValid`:
 * "Record is corrupt (stored crc = S, computed crc = C)", both unsigned decimal), with the algorithm.
 */
export function crcMismatchText(h: { magic: number; crc: number; computedCrc?: number }): string {
  const computed = h.computedCrc === undefined ? 'not computed' : String(h.computedCrc >>> 0);
  return `Record is corrupt (stored crc = ${h.crc >>> 0}, computed crc = ${computed}; ${crcAlgorithm(h.magic)})`;
}
