/**
 * How the views word a batch's CRC state, in Kafka's words for a mismatch
 * (`DefaultRecordBatch.ensureValid` / `LegacyRecord.ensureValid`: "Record is corrupt (stored crc = S,
 * computed crc = C)"), with the algorithm: CRC-32C for magic 2, CRC-32 for magic 0/1.
 */

/** The CRC fields a record row and a batch row share (CRCs as unsigned 32-bit numbers). */
export interface CrcState {
  crcValid: boolean | null;
  crc: number;
  computedCrc: number | null;
  crcAlgorithm: 'CRC-32C' | 'CRC-32';
}

/** "valid (CRC-32C 0x…)", "not checked", or "MISMATCH: Record is corrupt (stored crc = S, computed crc = C; CRC-32C)". */
export function crcText(c: CrcState): string {
  if (c.crcValid === null) return 'not checked';
  if (c.crcValid) return `valid (${c.crcAlgorithm} ${c.crc})`;
  return `MISMATCH: ${crcMismatch(c)}`;
}

/** Kafka's sentence for a mismatch, with the algorithm. */
export function crcMismatch(c: CrcState): string {
  return `Record is corrupt (stored crc = ${c.crc}, computed crc = ${c.computedCrc ?? 'not computed'}; ${c.crcAlgorithm})`;
}
