/**
 * Provider-safe tool names.
 *
 * Providers accept `^[a-zA-Z0-9_-]{1,64}$` (the strictest rule shared by OpenAI, Anthropic and Gemini),
 * but tools from outside use dots and other characters (`spotify.play`). No pure encoding can be
 * reversible *and* leave every valid name unchanged (`math.sum` -> `math_sum` may meet a real
 * `math_sum`), so reversibility comes from a per-registry two-way map instead:
 * - a valid name is its own wire name;
 * - otherwise each run of illegal characters becomes `_` (`spotify.play` -> `spotify_play`), which
 *   keeps names readable for the model;
 * - a name longer than 64 characters, or whose wire name is already taken, gets a short hash of the
 *   original name as suffix (`_` + 8 hex digits), so the result stays stable across runs.
 * The first name to claim a wire name keeps it; later colliding names get the hash suffix.
 */

import { DimsumError } from "../errors.js";

const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_LENGTH = 64;
const HASH_SUFFIX_LENGTH = 9; // "_" + 8 hex digits

/** True when a provider accepts `name` as a tool name as it is. */
export function isValidWireName(name: string): boolean {
  return WIRE_NAME.test(name);
}

/** The readable provider-safe form of `name`; unchanged when already valid. Not collision-aware. */
export function toWireName(name: string): string {
  if (isValidWireName(name)) return name;
  const cleaned = name.replace(/[^a-zA-Z0-9_-]+/g, "_");
  // A name made only of illegal characters would collapse to "_": give it something to read.
  if (/^_*$/.test(cleaned)) return `tool${hashSuffix(name)}`;
  return cleaned.length <= MAX_LENGTH ? cleaned : withHash(cleaned, name);
}

/** The wire name of `name` with the hash suffix, for when the plain form is taken or too long. */
export function toHashedWireName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]+/g, "_");
  return withHash(/^_*$/.test(cleaned) ? "tool" : cleaned, name);
}

function withHash(base: string, original: string): string {
  return base.slice(0, MAX_LENGTH - HASH_SUFFIX_LENGTH) + hashSuffix(original);
}

/** `_` + 8 hex digits of a 32-bit FNV-1a hash over the UTF-16 code units: short and stable. */
function hashSuffix(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `_${hash.toString(16).padStart(8, "0")}`;
}

/** A two-way map between tool names and the wire names providers see. */
export class WireNameMap {
  readonly #toWire = new Map<string, string>();
  readonly #toName = new Map<string, string>();

  /**
   * Gives `name` a wire name (or returns the one it has), trying `preferred` first when it is valid,
   * so a copied registry keeps the names it had. Throws DimsumError if no free wire name exists.
   */
  assign(name: string, preferred?: string): string {
    const existing = this.#toWire.get(name);
    if (existing !== undefined) return existing;
    const candidates = [toWireName(name), toHashedWireName(name)];
    if (preferred !== undefined && isValidWireName(preferred)) candidates.unshift(preferred);
    for (const candidate of candidates) {
      if (!this.#toName.has(candidate)) {
        this.#toWire.set(name, candidate);
        this.#toName.set(candidate, name);
        return candidate;
      }
    }
    const holder = this.#toName.get(toHashedWireName(name));
    throw new DimsumError("config", `Tool names \`${name}\` and \`${holder}\` map to the same wire name.`, {
      hint: "rename one of the two tools",
    });
  }

  /** Forgets `name` and frees its wire name. */
  release(name: string): void {
    const wire = this.#toWire.get(name);
    if (wire === undefined) return;
    this.#toWire.delete(name);
    this.#toName.delete(wire);
  }

  /** The wire name assigned to `name`, if any. */
  wireOf(name: string): string | undefined {
    return this.#toWire.get(name);
  }

  /** The original name behind a wire name, if any. */
  nameOf(wireName: string): string | undefined {
    return this.#toName.get(wireName);
  }
}
