/**
 * Byte views shared by the codec and the decode layer. Pure: no I/O.
 */

/**
 * `b` as a Node Buffer sharing its memory (no copy): Node's zlib, the native codecs and avsc take
 * Buffers, while the engine passes Uint8Array views of segment chunks.
 * @param b bytes (a Buffer is returned as is).
 * @returns a Buffer over the same `b.byteLength` bytes.
 */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}
