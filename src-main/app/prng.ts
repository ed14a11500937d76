/**
 * mulberry32, a small deterministic pseudo-random number generator: the same uint32 seed gives the
 * same sequence of numbers in [0, 1) everywhere. Used by the demo log directory, the benches' data
 * generators and the fuzzer, so that each is reproducible from its seed. Not for anything secret.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
