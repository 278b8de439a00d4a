/**
 * `share_file`: an agent puts a file of its workspace (a report, a chart it wrote) into the chat. The
 * file is checked like a person's attachment (kind and size), stored in the chat's attachments, and
 * shown with the answer; a chat bound to a messenger gets it as a platform file. Offered to agents
 * that may read their workspace (`read_file`), so it reads nothing they could not read already.
 */
import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import * as z from "zod";
import { type AttachmentLimits, cleanFileName } from "../attachments/kinds.js";
import { attachBytes } from "../attachments/to-parts.js";
import { toolFailure } from "../tools/builtin/tool-error.js";
import { resolveInWorkspace } from "../tools/builtin/workspace-path.js";
import { defineTool, type ToolFile, type ZodTool } from "../tools/types.js";
import type { AgentRecord } from "./types.js";

export const SHARE_FILE_TOOL = "share_file";

export interface ShareFileDeps {
  limits: AttachmentLimits;
  /** Stores the bytes in the chat's attachments under `name`; returns what was stored. */
  put(file: { mimeType: string; kind: ToolFile["kind"]; data: Buffer; name: string }): Promise<ToolFile>;
}

const parameters = z.object({
  path: z.string().min(1).describe("The file's path in the workspace, e.g. report.md or out/chart.png"),
  name: z.string().min(1).max(200).optional().describe("The name people see (default: the file's own)"),
});

/** Whether an agent may be offered share_file: it may read its workspace and share_file is not denied. */
export function mayShareFiles(agent: Pick<AgentRecord, "toolsAllow" | "toolsDeny">): boolean {
  const allowed = agent.toolsAllow === undefined || agent.toolsAllow.includes("read_file");
  return allowed && !agent.toolsDeny.includes("read_file") && !agent.toolsDeny.includes(SHARE_FILE_TOOL);
}

/** Builds the share_file tool of one chat run. */
export function createShareFileTool(deps: ShareFileDeps): ZodTool {
  const largest = Math.max(deps.limits.imageBytes, deps.limits.pdfBytes, deps.limits.textBytes);
  return defineTool({
    name: SHARE_FILE_TOOL,
    description:
      "Put a file from your workspace into the chat, for the people in it (and the messenger chat it is bound to): a report, a chart, a CSV. Images, PDFs and text files only. Write the file first, then share it.",
    parameters,
    async execute(args, ctx) {
      const path = await resolveInWorkspace(ctx.workspace, args.path);
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) {
        throw toolFailure(
          `There is no file ${args.path} in the workspace.`,
          "write it first, or check the path",
        );
      }
      if (info.size > largest) {
        throw toolFailure(
          `${args.path} is ${info.size} bytes, over the ${largest} bytes a chat file may have.`,
          "share a smaller file (compress it, or split it)",
        );
      }
      const name = cleanFileName(args.name ?? basename(path));
      const file = attachBytes(await readFile(path), name, deps.limits);
      const stored = await deps.put({ mimeType: file.mimeType, kind: file.kind, data: file.data, name });
      return {
        content: `Shared ${stored.name} (${stored.size} bytes, ${stored.mimeType}) in the chat.`,
        file: stored,
      };
    },
  });
}
