/**
 * The slice of the WebAssembly JS API the vector kernel uses. The project's `lib` (ES2023, no DOM)
 * and @types/node 20 do not declare `WebAssembly`, so it is typed here and read from globalThis.
 */

export interface WasmMemory {
  /** An ArrayBuffer, or a SharedArrayBuffer for memory shared with the scan worker. */
  readonly buffer: ArrayBufferLike;
  grow(pages: number): number;
}

export type WasmModule = object;

export interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
  validate(bytes: Uint8Array): boolean;
}

/** The runtime's WebAssembly object, or undefined where there is none. */
export const wasm: WasmApi | undefined = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** True for memory whose buffer can be read by other threads. */
export function isShared(memory: WasmMemory): boolean {
  return typeof SharedArrayBuffer !== "undefined" && memory.buffer instanceof SharedArrayBuffer;
}

/** Shared WebAssembly memory of at least `pages` pages, or undefined where threads cannot share it. */
export function createSharedMemory(pages: number, maximum: number): WasmMemory | undefined {
  if (!wasm || typeof SharedArrayBuffer === "undefined" || pages > maximum) return undefined;
  try {
    return new wasm.Memory({ initial: pages, maximum, shared: true });
  } catch {
    return undefined;
  }
}

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
