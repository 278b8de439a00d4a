/** Types of scripts/ensure-test-packages.mjs (plain JavaScript: it runs before the build). */
export interface TestPackage {
  name: string;
  debianPackage: string;
  paths: string[];
  overrideVar?: string;
  neededBy: string;
}
export declare const TEST_PACKAGES: TestPackage[];
export declare const CHROMIUM_PATHS: string[];
export declare const APT_INSTALL: string;
export declare function aptInstall(packages: string[]): string;
export type TestPackagesPlan =
  | { kind: "found" }
  | { kind: "install"; packages: string[] }
  | { kind: "stop"; message: string };
export declare function testPackagesPlan(
  facts: {
    overrides: Record<string, string | undefined>;
    exists: (path: string) => boolean;
    isRoot: boolean;
    hasApt: boolean;
  },
  packages?: TestPackage[],
): TestPackagesPlan;
