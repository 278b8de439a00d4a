/**
 * Whether this process runs inside a container, and what makes bubblewrap work there: a default
 * container refuses the user namespaces bubblewrap creates and masks the /proc it mounts, so the
 * sandbox probe's failure names the container options instead of a kernel setting.
 */
import { existsSync, readFileSync } from "node:fs";

/** What the container checks read (the real files and environment unless a test passes its own). */
export interface ContainerSigns {
  exists(path: string): boolean;
  read(path: string): string | undefined;
  env: Readonly<Record<string, string | undefined>>;
}

const hostSigns: ContainerSigns = {
  exists: existsSync,
  read: (path) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
  env: process.env,
};

/** Podman's /run/.containerenv, Docker's /.dockerenv, `container=` (podman, systemd-nspawn), Kubernetes' cgroups. */
export function inContainer(signs: ContainerSigns = hostSigns): boolean {
  if (signs.exists("/run/.containerenv") || signs.exists("/.dockerenv")) return true;
  if (signs.env.container) return true;
  if (signs.env.KUBERNETES_SERVICE_HOST) return true;
  return /\b(docker|kubepods|containerd|libpod)\b/.test(signs.read("/proc/1/cgroup") ?? "");
}

/** The fix for a sandbox probe that failed inside a container (README: "Sandbox in containers"). */
export const CONTAINER_SANDBOX_HINT =
  "inside a container bubblewrap needs user namespaces and an unmasked /proc: run it with " +
  "`--security-opt unmask=ALL --security-opt seccomp=unconfined` (podman; Docker: `--security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined`) " +
  "or `--privileged`, see the README's Deploy section";
