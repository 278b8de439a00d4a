/**
 * Files a run's tools put into its chat on their own (the browser tool's screenshots): checked like
 * a person's attachment (kind and size), stored once by content in the chat's attachments, and
 * linked to the chat as the agent's.
 */
import { createHash } from "node:crypto";
import type { AttachmentLimits } from "../attachments/kinds.js";
import { attachBytes } from "../attachments/to-parts.js";
import type { ToolFile } from "../tools/types.js";
import type { AttachmentRepository } from "./store/repositories.js";

/** Stores bytes as a file of a chat, put there by an agent. */
export type ChatFiles = (
  channelId: string,
  agentId: string,
) => (data: Buffer, name: string) => Promise<ToolFile>;

/** Chat files over the team's attachments, checked against the attachment limits. */
export function chatFiles(
  attachments: AttachmentRepository,
  limits: AttachmentLimits,
  now: () => number,
): ChatFiles {
  return (channelId, agentId) => async (data, name) => {
    const file = attachBytes(data, name, limits);
    const id = createHash("sha256").update(file.data).digest("hex");
    return attachments.put(
      { id, mimeType: file.mimeType, kind: file.kind, data: file.data },
      { channelId, name, by: `agent:${agentId}`, at: now() },
    );
  };
}
