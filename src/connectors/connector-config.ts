/**
 * Turning API input into stored connector configs: names, settings and secrets validated against the
 * connector's kind, secrets merged (a given secret replaces the stored one, `""` removes it), and
 * the view the API returns, which shows secrets only as set/unset with a short preview.
 */
import { randomBytes } from "node:crypto";
import { invalid } from "../errors.js";
import type { StoredConnector } from "./store/connector-repo.js";
import type {
  ConnectorInput,
  ConnectorKind,
  ConnectorPatch,
  ConnectorRecord,
  ConnectorSecrets,
  ConnectorSettings,
  ConnectorStatus,
  ConnectorView,
} from "./types.js";

const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** A new connector id, e.g. `cn_k3j9x2m4q8`. */
export function newConnectorId(): string {
  return `cn_${randomBytes(8).toString("base64url").replace(/[-_]/g, "x").toLowerCase()}`;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "" || trimmed.length > 60) throw invalid("A connector needs a name of 1 to 60 characters.");
  return trimmed;
}

function checkAgentId(agentId: string): string {
  if (!AGENT_ID.test(agentId))
    throw invalid(`"${agentId}" is not an agent id.`, "pick an agent from the list");
  return agentId;
}

/** Merges new secrets into stored ones, checking names and formats against the kind. */
export function mergeSecrets(
  kind: ConnectorKind,
  stored: ConnectorSecrets,
  given: ConnectorSecrets | undefined,
): ConnectorSecrets {
  const merged: ConnectorSecrets = { ...stored };
  for (const [name, value] of Object.entries(given ?? {})) {
    const spec = kind.secrets.find((s) => s.name === name);
    if (!spec) {
      throw invalid(
        `A ${kind.label} connector has no secret "${name}".`,
        `its secrets are ${kind.secrets.map((s) => `${s.name} (${s.label})`).join(", ")}`,
      );
    }
    if (value === "") {
      delete merged[name];
      continue;
    }
    if (typeof value !== "string" || value.length > 4096 || (spec.pattern && !spec.pattern.test(value))) {
      throw invalid(
        `The ${kind.label} ${spec.label} you entered is not valid${spec.rule ? `: it must be ${spec.rule}` : ""}.`,
        "copy it again from the platform's console",
      );
    }
    merged[name] = value;
  }
  return merged;
}

/** The required secrets still missing, by label (a connector cannot start without them). */
export function missingSecrets(
  kind: ConnectorKind,
  secrets: ConnectorSecrets,
  settings: ConnectorSettings,
): string[] {
  return kind.secrets
    .filter((s) => s.required && (s.requiredWhen?.(settings) ?? true) && !secrets[s.name])
    .map((s) => s.label);
}

/** Validates the user mapping: `user` mode needs a user id. */
function mapping(
  userMode: "guest" | "user" | undefined,
  userId: string | undefined,
): Pick<ConnectorRecord, "userMode" | "userId"> {
  const mode = userMode ?? "guest";
  if (mode === "user") {
    if (!userId) throw invalid('userMode "user" needs the userId to post as.');
    return { userMode: mode, userId };
  }
  return { userMode: mode };
}

/** A new record and its secrets from create input. */
export function recordFromInput(
  kind: ConnectorKind,
  input: ConnectorInput,
  createdBy: string,
  now: number,
): { record: ConnectorRecord; secrets: ConnectorSecrets } {
  const record: ConnectorRecord = {
    id: newConnectorId(),
    type: kind.type,
    name: checkName(input.name),
    agentId: checkAgentId(input.agentId),
    settings: kind.parseSettings({ ...kind.createDefaults, ...input.settings }),
    ...mapping(input.userMode, input.userId),
    enabled: false,
    createdBy,
    createdAt: now,
    updatedAt: now,
  };
  return { record, secrets: mergeSecrets(kind, kind.generateSecrets?.() ?? {}, input.secrets) };
}

/** The record and secrets after a patch. */
export function applyPatch(
  kind: ConnectorKind,
  stored: { record: ConnectorRecord; secrets: ConnectorSecrets },
  patch: ConnectorPatch,
  now: number,
): { record: ConnectorRecord; secrets: ConnectorSecrets } {
  const { record } = stored;
  const next: ConnectorRecord = {
    ...record,
    name: patch.name === undefined ? record.name : checkName(patch.name),
    agentId: patch.agentId === undefined ? record.agentId : checkAgentId(patch.agentId),
    settings:
      patch.settings === undefined
        ? record.settings
        : kind.parseSettings({ ...record.settings, ...patch.settings }),
    updatedAt: now,
  };
  delete next.userId;
  const userId = patch.userId === null ? undefined : (patch.userId ?? record.userId);
  Object.assign(next, mapping(patch.userMode ?? record.userMode, userId));
  return { record: next, secrets: mergeSecrets(kind, stored.secrets, patch.secrets) };
}

/** What the API shows of a connector. */
export function viewOf(kind: ConnectorKind, stored: StoredConnector, status: ConnectorStatus): ConnectorView {
  const secrets: ConnectorView["secrets"] = {};
  for (const spec of kind.secrets) {
    const preview = stored.previews[spec.name];
    secrets[spec.name] = preview === undefined ? { set: false } : { set: true, preview };
  }
  return {
    ...stored.record,
    // With defaults applied, so a form shows what the connector really does (e.g. an older Feishu
    // connector without a mode uses the webhook).
    settings: parsedOr(kind, stored.record.settings),
    secrets,
    status,
    inboundPath: `/api/connectors/${encodeURIComponent(stored.record.id)}/inbound`,
  };
}

function parsedOr(kind: ConnectorKind, settings: ConnectorRecord["settings"]): ConnectorRecord["settings"] {
  try {
    return kind.parseSettings(settings);
  } catch {
    return settings;
  }
}
