/**
 * Int8 dot products of one query against every row of a matrix, the inner loop of vector search.
 * Plain JS manages ~1 multiply-add per nanosecond, too slow for 100k rows; this small WebAssembly
 * module (bytes written out below, no compiler involved) uses 128-bit SIMD: 16 int8 lanes per load,
 * widened to int16 and summed with i32x4.dot_i16x8_s. A JS loop over the same memory is the fallback
 * where WebAssembly SIMD is unavailable.
 */

import { isShared, type WasmMemory, type WasmModule, wasm } from "./wasm.js";

/**
 * Computes out[r] = Σ_j mat[r·dims + j] · query[j] (int8 inputs, int32 outputs), all offsets in
 * bytes. `rows` must be even (the caller pads with a spare row) and `dims` a multiple of 16.
 */
export type DotKernel = (
  matOffset: number,
  rows: number,
  dims: number,
  queryOffset: number,
  outOffset: number,
) => void;

const uleb = (n: number): number[] => {
  const out: number[] = [];
  let v = n;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
};

// The function body, one instruction per line with its text-format spelling. Two rows per pass: the
// query chunk is loaded and widened once for both, which cuts the work per byte by about a third.
// Params: 0 mat, 1 rows (even), 2 dims (a multiple of 16, > 0), 3 query, 4 out.
// Locals: 5 row, 6 column, 7 row pointer, 8 next row pointer (i32);
//         9 accumulator, 10 next accumulator, 11 row chunk, 12 query chunk, 13 query low, 14 query high (v128).
const ZERO = "00 ".repeat(16);
const HSUM = (acc: string) =>
  `20 ${acc} fd 1b 00 20 ${acc} fd 1b 01 6a 20 ${acc} fd 1b 02 6a 20 ${acc} fd 1b 03 6a`;
const BODY: ReadonlyArray<readonly [hex: string, wat: string]> = [
  ["20 01 45 0d 00", "(br_if 0 (i32.eqz (local.get $rows)))  ;; nothing to do"],
  ["20 00 21 07", "(local.set $ptr (local.get $mat))"],
  ["03 40", "loop $row"],
  ["20 07 20 02 6a 21 08", "  (local.set $ptr2 (i32.add $ptr $dims))"],
  [`fd 0c ${ZERO}21 09`, "  (local.set $acc (v128.const i32x4 0 0 0 0))"],
  [`fd 0c ${ZERO}21 0a`, "  (local.set $acc2 (v128.const i32x4 0 0 0 0))"],
  ["41 00 21 06", "  (local.set $col (i32.const 0))"],
  ["03 40", "  loop $col"],
  ["20 03 20 06 6a fd 00 00 00 21 0c", "    (local.set $q (v128.load (i32.add $query $col)))"],
  ["20 0c fd 87 01 21 0d", "    (local.set $qlo (i16x8.extend_low_i8x16_s $q))"],
  ["20 0c fd 88 01 21 0e", "    (local.set $qhi (i16x8.extend_high_i8x16_s $q))"],
  ["20 07 20 06 6a fd 00 00 00 21 0b", "    (local.set $a (v128.load (i32.add $ptr $col)))"],
  [
    "20 09 20 0b fd 87 01 20 0d fd ba 01 fd ae 01",
    "    (i32x4.add $acc (i32x4.dot_i16x8_s (extend_low $a) $qlo))",
  ],
  [
    "20 0b fd 88 01 20 0e fd ba 01 fd ae 01 21 09",
    "    (local.set $acc (i32x4.add .. (dot (extend_high $a) $qhi)))",
  ],
  ["20 08 20 06 6a fd 00 00 00 21 0b", "    (local.set $a (v128.load (i32.add $ptr2 $col)))"],
  [
    "20 0a 20 0b fd 87 01 20 0d fd ba 01 fd ae 01",
    "    (i32x4.add $acc2 (i32x4.dot_i16x8_s (extend_low $a) $qlo))",
  ],
  [
    "20 0b fd 88 01 20 0e fd ba 01 fd ae 01 21 0a",
    "    (local.set $acc2 (i32x4.add .. (dot (extend_high $a) $qhi)))",
  ],
  ["20 06 41 10 6a 22 06 20 02 49 0d 00", "    (br_if $col (i32.lt_u (local.tee $col (+ $col 16)) $dims))"],
  ["0b", "  end"],
  ["20 04 20 05 41 02 74 6a", "  (i32.add $out (i32.shl $row 2))"],
  [HSUM("09"), "  (+ (extract_lane 0..3 $acc))"],
  ["36 02 00", "  i32.store"],
  ["20 04 20 05 41 02 74 6a", "  (i32.add $out (i32.shl $row 2))"],
  [HSUM("0a"), "  (+ (extract_lane 0..3 $acc2))"],
  ["36 02 04", "  i32.store offset=4"],
  ["20 08 20 02 6a 21 07", "  (local.set $ptr (i32.add $ptr2 $dims))"],
  ["20 05 41 02 6a 22 05 20 01 49 0d 00", "  (br_if $row (i32.lt_u (local.tee $row (+ $row 2)) $rows))"],
  ["0b", "end"],
  ["0b", "end of function"],
];

const hexBytes = (hex: string): number[] =>
  hex
    .split(" ")
    .filter((b) => b !== "")
    .map((b) => Number.parseInt(b, 16));

/** Largest shared memory a kernel imports, in 64 KiB pages (2 GiB: 8M rows of 256 dimensions). */
export const SHARED_MAX_PAGES = 32_768;

function moduleBytes(shared: boolean): Uint8Array {
  const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
  const name = (text: string) => [...uleb(text.length), ...Array.from(text, (c) => c.charCodeAt(0))];
  const I32 = 0x7f;
  const V128 = 0x7b;
  const fn = [2, 4, I32, 6, V128, ...BODY.flatMap(([hex]) => hexBytes(hex))];
  // Memory limits: flags 0 = minimum only; 3 = minimum and maximum, shared between threads.
  const limits = shared ? [0x03, 0x01, ...uleb(SHARED_MAX_PAGES)] : [0x00, 0x01];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
    ...section(2, [1, ...name("env"), ...name("memory"), 0x02, ...limits]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name("dot_i8"), 0x00, 0]),
    ...section(10, [1, ...uleb(fn.length), ...fn]),
  ]);
}

const compiled = new Map<boolean, WasmModule | null>();

/** The compiled SIMD kernel for plain or shared memory; null where WebAssembly SIMD is unavailable. */
export function simdModule(shared = false): WasmModule | null {
  let module = compiled.get(shared);
  if (module === undefined) {
    const bytes = moduleBytes(shared);
    try {
      module = wasm?.validate(bytes) ? new wasm.Module(bytes) : null;
    } catch {
      // A runtime that forbids WebAssembly compilation (e.g. --jitless): use the JS loop.
      module = null;
    }
    compiled.set(shared, module);
  }
  return module;
}

/** True when the SIMD kernel can run here (Node 16.4+ has WebAssembly SIMD). */
export function simdAvailable(): boolean {
  return simdModule() !== null;
}

/** The scalar kernel over the same memory; used where SIMD is missing, and to check the SIMD one. */
export function jsDotKernel(memory: WasmMemory): DotKernel {
  return (matOffset, rows, dims, queryOffset, outOffset) => {
    const bytes = new Int8Array(memory.buffer);
    const out = new Int32Array(memory.buffer, outOffset, rows);
    for (let r = 0; r < rows; r++) {
      const base = matOffset + r * dims;
      let sum = 0;
      for (let j = 0; j < dims; j++) sum += bytes[base + j]! * bytes[queryOffset + j]!;
      out[r] = sum;
    }
  };
}

/** A kernel bound to `memory`: the SIMD one when available, unless `forceJs`. */
export function dotKernel(memory: WasmMemory, forceJs = false): DotKernel {
  const module = forceJs ? null : simdModule(isShared(memory));
  if (module === null || !wasm) return jsDotKernel(memory);
  const instance = new wasm.Instance(module, { env: { memory } });
  return instance.exports.dot_i8 as DotKernel;
}
