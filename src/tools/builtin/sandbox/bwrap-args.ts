/**
 * The bubblewrap command line for one sandboxed command: new user, PID, IPC, UTS, cgroup and (unless
 * allowed) network namespaces; the system folders read-only; the workspace read-write; DIMSUM_HOME,
 * homes, /run, /sys and other secret places not mounted at all; a private /tmp; a cleared environment.
 */
import { lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { sep } from "node:path";

/** System folders shown read-only (when they exist); symlinks (merged /usr) are recreated as links. */
export const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];
/** Secret files in /etc, replaced by an empty file. */
const ETC_SECRET_FILES = ["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/npmrc"];
/** Secret folders in /etc, replaced by an empty folder. */
const ETC_SECRET_DIRS = ["/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d"];
/** The unprivileged user commands run as inside the sandbox (it maps to the caller outside). */
export const SANDBOX_UID = 1000;
/** Size of the private /tmp. */
const TMP_BYTES = 256 * 1024 * 1024;

export interface BwrapRequest {
  workspace: string;
  cwd: string;
  env: Record<string, string>;
  network: boolean;
  hidePaths: readonly string[];
  /** The program and arguments to run inside. */
  argv: readonly string[];
  /** More mounts: `[source, destination, read-only]` (the network bridge's folder, Node). */
  binds?: ReadonlyArray<readonly [string, string, boolean]>;
}

function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

export function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** Namespaces and process handling common to the probe and real runs. */
function isolationArgs(network: boolean): string[] {
  return [
    "--unshare-all",
    ...(network ? ["--share-net"] : []),
    "--unshare-user",
    // No nested user namespaces: nothing inside can gain capabilities, even over its own sandbox.
    "--disable-userns",
    "--uid",
    String(SANDBOX_UID),
    "--gid",
    String(SANDBOX_UID),
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
  ];
}

/** Read-only system folders with their secrets masked. */
function systemArgs(): string[] {
  const args: string[] = [];
  for (const path of SYSTEM_PATHS) {
    const info = statOf(path);
    if (!info) continue;
    if (info.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else if (info.isDirectory()) args.push("--ro-bind", path, path);
  }
  for (const file of ETC_SECRET_FILES) if (statOf(file)?.isFile()) args.push("--ro-bind", "/dev/null", file);
  for (const dir of ETC_SECRET_DIRS) if (statOf(dir)?.isDirectory()) args.push("--tmpfs", dir);
  return args;
}

/** With the network on, a resolv.conf that links outside the system folders (e.g. into /run) is shown too. */
function resolverArgs(): string[] {
  const link = "/etc/resolv.conf";
  if (!statOf(link)?.isSymbolicLink()) return [];
  try {
    const target = realpathSync(link);
    return SYSTEM_PATHS.some((p) => isInside(target, p)) ? [] : ["--ro-bind", target, target];
  } catch {
    return [];
  }
}

/** Covers a hidden path: an empty folder for a folder, an empty read-only file for a file. */
function maskArgs(path: string): string[] {
  const info = statOf(path);
  if (!info) return [];
  if (info.isDirectory()) return ["--tmpfs", path];
  return ["--ro-bind", "/dev/null", path];
}

/** The arguments of a real run, ending with `--` and the command's argv. */
export function bwrapArgs(request: BwrapRequest): string[] {
  const args = [
    ...isolationArgs(request.network),
    ...systemArgs(),
    ...(request.network ? resolverArgs() : []),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    String(TMP_BYTES),
    "--tmpfs",
    "/tmp",
  ];
  // Secret places under a system folder (e.g. a config file in /etc) are masked there.
  for (const hidden of request.hidePaths) {
    if (SYSTEM_PATHS.some((p) => isInside(hidden, p))) args.push(...maskArgs(hidden));
  }
  args.push("--bind", request.workspace, request.workspace);
  // DIMSUM_HOME, `.env` or the config file inside the workspace stay hidden (masked after the bind).
  for (const hidden of request.hidePaths) {
    if (hidden !== request.workspace && isInside(hidden, request.workspace)) args.push(...maskArgs(hidden));
  }
  for (const [source, dest, readOnly] of request.binds ?? []) {
    args.push(readOnly ? "--ro-bind" : "--bind", source, dest);
  }
  args.push("--chdir", request.cwd, "--clearenv");
  for (const [name, value] of Object.entries(request.env)) args.push("--setenv", name, value);
  args.push("--", ...request.argv);
  return args;
}

/** The probe: the same isolation over a read-only system, running /bin/true. */
export function probeArgs(): string[] {
  return [...isolationArgs(false), ...systemArgs(), "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"];
}
