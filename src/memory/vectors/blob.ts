/** Float32 vectors as SQLite BLOBs: raw little-endian float32, the byte order of every platform Node runs on. */

/** The bytes of a vector, for binding as a BLOB. */
export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A vector from BLOB bytes; copies, because SQLite's buffers need not be 4-byte aligned. */
export function blobToVector(blob: Uint8Array): Float32Array {
  const vector = new Float32Array(Math.floor(blob.byteLength / 4));
  new Uint8Array(vector.buffer).set(blob.subarray(0, vector.length * 4));
  return vector;
}
