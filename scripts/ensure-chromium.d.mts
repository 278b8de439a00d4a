/** Types of scripts/ensure-chromium.mjs (plain JavaScript: it runs before the build). */
export declare const CHROMIUM_PATHS: string[];
export declare const APT_INSTALL: string;
export type ChromiumPlan =
  | { kind: "found"; path: string }
  | { kind: "install" }
  | { kind: "stop"; message: string };
export declare function chromiumPlan(facts: {
  override?: string | undefined;
  exists: (path: string) => boolean;
  isRoot: boolean;
  hasApt: boolean;
}): ChromiumPlan;
