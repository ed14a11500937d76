/**
 * The byte vectors of the format spec (`kafka-log-format.md` §15.1–§15.9), written as hex dumps, and
 * {@link hex}, which reads such a dump. Shared by the format tests (both directions) and the cleaner's
 * byte-level tests (§15.2 → §15.3 is the delete-horizon rebuild).
 */

/** Bytes of a hex dump: `0000:`-style address prefixes and all white space are ignored. */
export const hex = (s: string): Buffer => Buffer.from(s.replace(/^[0-9a-f]{4}:/gm, '').replace(/\s+/g, ''), 'hex');

export const V15_1 = hex(`
0000: 00 00 00 00 00 00 00 00 00 00 00 3a 00 00 00 00
0010: 02 e9 9b 8d d8 00 00 00 00 00 00 00 00 01 8b cf
0020: e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
0030: ff ff ff ff ff ff ff ff ff 00 00 00 01 10 00 00
0040: 00 02 6b 02 76 00`);
export const V15_2 = hex(`
0000: 00 00 00 00 00 00 00 05 00 00 00 39 00 00 00 03
0010: 02 b5 d1 86 80 00 00 00 00 00 00 00 00 01 8b cf
0020: e5 68 07 00 00 01 8b cf e5 68 07 ff ff ff ff ff
0030: ff ff ff ff ff ff ff ff ff 00 00 00 01 0e 00 00
0040: 00 02 6b 01 00`);
export const V15_3 = hex(`
0000: 00 00 00 00 00 00 00 05 00 00 00 3c 00 00 00 03
0010: 02 6f e5 3f 28 00 40 00 00 00 00 00 00 01 8b d5
0020: 14 eb c0 00 00 01 8b cf e5 68 07 ff ff ff ff ff
0030: ff ff ff ff ff ff ff ff ff 00 00 00 01 14 00 f1
0040: 8e fc 52 00 02 6b 01 00`);
export const V15_4 = hex(`
0000: 00 00 00 00 00 00 00 0a 00 00 00 42 00 00 00 00
0010: 02 4e 07 46 d7 00 30 00 00 00 00 00 00 01 8b cf
0020: e5 68 64 00 00 01 8b cf e5 68 64 00 00 00 00 00
0030: 00 03 e8 00 00 ff ff ff ff 00 00 00 01 20 00 00
0040: 00 08 00 00 00 01 0c 00 00 00 00 00 05 00`);
export const V15_5 = hex(`
0000: 00 00 00 00 00 00 00 00 00 00 00 46 00 00 00 00
0010: 02 4d d2 55 d5 00 00 00 00 00 01 00 00 01 8b cf
0020: e5 68 00 00 00 01 8b cf e5 68 01 ff ff ff ff ff
0030: ff ff ff ff ff ff ff ff ff 00 00 00 02 18 00 00
0040: 00 02 61 02 31 02 02 68 02 78 0e 00 02 02 01 02
0050: 32 00`);
export const V15_6 = hex(`
0000: 00 00 00 00 00 00 00 64 00 00 00 31 00 00 00 02
0010: 02 ce 68 07 39 00 10 00 00 00 04 ff ff ff ff ff
0020: ff ff ff 00 00 01 8b cf e5 68 32 00 00 00 00 00
0030: 00 03 e8 00 00 00 00 00 07 00 00 00 00`);
export const V15_7 = hex(`
0000: 00 00 00 00 00 00 00 00 00 00 00 49 00 00 00 00
0010: 02 92 4f a7 90 00 03 00 00 00 00 00 00 01 8b cf
0020: e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
0030: ff ff ff ff ff ff ff ff ff 00 00 00 01 04 22 4d
0040: 18 60 40 82 09 00 00 80 10 00 00 00 02 6b 02 76
0050: 00 00 00 00 00`);
export const V15_8 = hex(`
0000: 00 00 00 00 00 00 00 00 00 00 00 50 00 00 00 00
0010: 02 08 ee 48 69 00 02 00 00 00 00 00 00 01 8b cf
0020: e5 68 00 00 00 01 8b cf e5 68 00 ff ff ff ff ff
0030: ff ff ff ff ff ff ff ff ff 00 00 00 01 82 53 4e
0040: 41 50 50 59 00 00 00 00 01 00 00 00 01 00 00 00
0050: 0b 09 20 10 00 00 00 02 6b 02 76 00`);
export const V15_9_V1 = hex(`
0000: 00 00 00 00 00 00 00 00 00 00 00 18 39 26 8c 33
0010: 01 00 00 00 01 8b cf e5 68 00 00 00 00 01 6b 00
0020: 00 00 01 76`);
export const V15_9_V0 = hex(`
0000: 00 00 00 00 00 00 00 00 00 00 00 10 1f ec d7 0a
0010: 00 00 00 00 00 01 6b 00 00 00 01 76`);
