/**
 * The slice of the WebAssembly JS API the vector kernel uses. The project's `lib` (ES2023, no DOM)
 * and @types/node 20 do not declare `WebAssembly`, so it is typed here and read from globalThis.
 */

export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

export type WasmModule = object;

export interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
  validate(bytes: Uint8Array): boolean;
}

/** The runtime's WebAssembly object, or undefined where there is none. */
export const wasm: WasmApi | undefined = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** A growable memory for the kernel: real WebAssembly memory, or a plain buffer when WebAssembly is missing. */
export function createMemory(): WasmMemory {
  if (wasm) return new wasm.Memory({ initial: 1 });
  let buffer = new ArrayBuffer(65_536);
  return {
    get buffer() {
      return buffer;
    },
    grow(pages: number) {
      const before = buffer.byteLength / 65_536;
      const next = new ArrayBuffer(buffer.byteLength + pages * 65_536);
      new Uint8Array(next).set(new Uint8Array(buffer));
      buffer = next;
      return before;
    },
  };
}
