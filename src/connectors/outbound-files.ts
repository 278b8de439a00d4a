/**
 * Files agents shared in a bound chat's answer (share_file), sent to the platform: the bytes are read
 * from the chat's attachments when the outbox item goes out, and posted as the platform's file
 * message by drivers that can (`sendFile`); a platform without one gets a line naming the file.
 */
import type { Team } from "../team/types.js";
import type { ConnectorDriver, OutboundMessage } from "./types.js";

/** Reads the chats' files (an admin may read every chat). */
const FILE_READER = { userId: "connector:files", role: "admin" } as const;

/** Sends an outbox item that carries a file; returns the platform's message id. */
export async function sendFile(
  driver: ConnectorDriver,
  message: OutboundMessage,
  team: Team,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { file: ref, ...line } = message;
  if (!ref || !driver.sendFile) return driver.send(line, signal);
  const { meta, data } = await team.readAttachment(FILE_READER, ref.channelId, ref.id);
  return driver.sendFile(message, { name: ref.name, mimeType: meta.mimeType, kind: meta.kind, data }, signal);
}
