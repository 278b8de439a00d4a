/**
 * Request schemas of the team API (agents, channels, messages, runs, flows, memory, MCP) and of the
 * OpenAI-compatible endpoint. They check shapes and sizes; the team facade checks the domain rules.
 */

import * as z from "zod";
import { VISIBILITIES } from "../../shared/visibility.js";
import { agentNetworkSchema } from "../../team/agent-network.js";
import {
  agentSettingsFields,
  answerFormatSchema,
  MAX_SOUL_CHARS,
  nameList,
  reasoningSchema,
} from "../../team/agent-schemas.js";

/** Largest message text, in characters (the facade also caps it at 32 KB of UTF-8). */
export const MAX_MESSAGE_CHARS = 32 * 1024;

const shortText = (max: number) => z.string().max(max, `at most ${max} characters`);
const idText = z.string().min(1, "required").max(200, "at most 200 characters");
const positiveInt = z.coerce.number().int("a whole number").positive("a positive number");

export const idParam = z.object({ id: idText });
/** Who sees an agent, a knowledge base or an MCP server (src/shared/visibility.ts). */
export const visibilityFields = {
  visibility: z.enum(VISIBILITIES).optional(),
  allowedUsers: z.array(idText).max(500, "at most 500 people").optional(),
};
export const numericIdParam = z.object({ id: positiveInt });
export const elicitationParams = z.object({ id: idText, elicitationId: idText });
const answerValue = z.union([
  z.string().max(10_000),
  z.number(),
  z.boolean(),
  z.array(z.string().max(1000)).max(100),
]);
/** The person's answer to an MCP server's request for input. */
export const elicitationAnswerSchema = z
  .object({
    action: z.enum(["accept", "decline", "cancel"]),
    content: z.record(z.string().max(200), answerValue).optional(),
  })
  .strict();
export const memberParams = z.object({
  id: idText,
  type: z.enum(["user", "agent"]),
  memberId: idText,
});

export const agentInputSchema = z.object({
  id: z.string().min(1, "required").max(40, "at most 40 characters"),
  name: z.string().trim().min(1, "required").max(80, "at most 80 characters"),
  emoji: shortText(32).optional(),
  /** One model, or a fallback chain: an array, or a comma list. */
  model: z.union([z.string().min(1).max(800), z.array(z.string().min(1).max(200)).min(1).max(8)]).optional(),
  ...agentSettingsFields,
  network: agentNetworkSchema.optional(),
  ...visibilityFields,
  soul: shortText(MAX_SOUL_CHARS).optional(),
});

/** `null` clears the model (use the default) or the allow list (all tools); omitted means unchanged. */
export const agentPatchSchema = z.object({
  name: z.string().trim().min(1, "required").max(80, "at most 80 characters").optional(),
  emoji: shortText(32).optional(),
  model: z
    .union([z.string().max(800), z.array(z.string().min(1).max(200)).max(8)])
    .nullable()
    .optional(),
  /** `null`: back to the model's default. */
  reasoning: reasoningSchema.nullable().optional(),
  toolsAllow: nameList(200).nullable().optional(),
  toolsDeny: nameList(200).optional(),
  memory: z.boolean().optional(),
  skills: nameList(100).optional(),
  knowledgeBases: nameList(100).nullable().optional(),
  askFirst: nameList(200).optional(),
  answerFormat: answerFormatSchema.nullable().optional(),
  /** `null`: back to the server's sandbox network. */
  network: agentNetworkSchema.nullable().optional(),
  ...visibilityFields,
});

export const soulSchema = z.object({ content: shortText(MAX_SOUL_CHARS) });

export const channelInputSchema = z.object({
  kind: z.enum(["direct", "group"]),
  name: z.string().trim().min(1, "required").max(100, "at most 100 characters"),
  leaderAgentId: idText.optional(),
  agentIds: z.array(idText).max(100, "at most 100 agents").default([]),
  userIds: z.array(idText).max(500, "at most 500 people").default([]),
});

export const channelPrefsSchema = z
  .object({ pinned: z.boolean().optional(), archived: z.boolean().optional() })
  .strict()
  .refine((p) => p.pinned !== undefined || p.archived !== undefined, "give pinned, archived or both");

export const channelPatchSchema = z.object({
  name: z.string().trim().min(1, "required").max(100, "at most 100 characters").optional(),
  leaderAgentId: idText.nullable().optional(),
  queueMode: z.enum(["steer", "followup", "collect", "interrupt"]).optional(),
});

export const approvalParams = z.object({ id: idText, callId: z.string().min(1).max(200) });
export const approvalAnswerSchema = z
  .object({
    decision: z.enum(["approve", "reject"]),
    always: z.boolean().optional(),
    reason: shortText(2000).optional(),
  })
  .strict();
export const grantParams = z.object({ id: idText, agentId: idText, tool: z.string().min(1).max(100) });

export const memberSchema = z.object({ type: z.enum(["user", "agent"]), id: idText });

export const chainSchema = z.object({
  steps: z
    .array(
      z.object({
        agentId: idText,
        requiresApproval: z.boolean().default(false),
        instruction: shortText(4000).optional(),
      }),
    )
    .max(12, "at most 12 steps"),
});

export const messagesQuerySchema = z.object({
  before: positiveInt.optional(),
  after: z.coerce.number().int("a whole number").nonnegative().optional(),
  limit: z.coerce.number().int("a whole number").min(1).max(200, "at most 200").optional(),
});

export const postMessageSchema = z.object({
  text: z
    .string()
    .min(1, "a message needs some text")
    .max(MAX_MESSAGE_CHARS, `at most ${MAX_MESSAGE_CHARS} characters`),
  /** Ids of files uploaded to the chat (`POST /api/channels/:id/attachments`). */
  attachments: z
    .array(z.string().regex(/^[0-9a-f]{64}$/, "an attachment id"))
    .max(100)
    .optional(),
});

/** `/api/channels/:id/attachments/:fileId`. */
export const attachmentParams = z.object({ id: idText, fileId: z.string().regex(/^[0-9a-f]{64}$/) });
/** `POST /api/channels/:id/attachments?name=`. */
export const uploadQuerySchema = z.object({ name: z.string().min(1).max(255) });

export const readMarkerSchema = z.object({ messageId: z.number().int().positive() });

export const searchQuerySchema = z.object({
  q: z.string().trim().min(1, "say what to search for").max(500, "at most 500 characters"),
  channelId: idText.optional(),
  limit: z.coerce.number().int().min(1).max(100, "at most 100").optional(),
});

const stepIndex = z.number().int().nonnegative();

export const flowActionSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("pause") }),
  z.object({ action: z.literal("resume") }),
  z.object({ action: z.literal("stop") }),
  z.object({ action: z.literal("skip"), stepIndex }),
  z.object({ action: z.literal("retry"), stepIndex }),
  z.object({ action: z.literal("approve"), stepIndex }),
  z.object({ action: z.literal("edit"), stepIndex, output: shortText(256 * 1024) }),
]);

export const memoryQuerySchema = z.object({
  userId: idText.optional(),
  /** Words to search for (ranked like the agents' recall); without them, newest first. */
  q: z.string().trim().max(2000, "at most 2000 characters").optional(),
  agentId: idText.optional(),
  type: z.enum(["semantic", "episodic", "procedural"]).optional(),
  limit: z.coerce.number().int().min(1).max(500, "at most 500").optional(),
  offset: z.coerce.number().int().nonnegative().optional(),
});

/** Whose memory an id names: left out, the caller's (admins: whoever has it). */
export const memoryOwnerQuerySchema = z.object({ userId: idText.optional() });

/** A person's edit of one archival memory. */
export const memoryEditSchema = z
  .object({
    text: z.string().trim().min(1, "required").max(2000, "at most 2000 characters").optional(),
    type: z.enum(["semantic", "episodic", "procedural"]).optional(),
    tags: z.array(z.string().min(1).max(40)).max(20, "at most 20 tags").optional(),
    importance: z.number().int("a whole number").min(1).max(10).optional(),
  })
  .refine((edit) => Object.keys(edit).length > 0, "give at least one of text, type, tags, importance");

/** Whose core block: the person (`userId`, admins only for others) and the agent (none: shared). */
export const coreScopeQuerySchema = z.object({ userId: idText.optional(), agentId: idText.optional() });
export const coreLabelParam = z.object({ label: z.string().min(1).max(32) });
export const coreBlockSchema = z.object({ value: z.string().max(20_000, "at most 20000 characters") });

/** `POST /api/memory/import`: the objects of `dimsum memory import`'s lines, checked one by one later. */
export const memoryImportSchema = z.object({
  memories: z.array(z.unknown()).min(1, "at least one memory").max(50_000, "at most 50,000 a request"),
  userId: idText.optional(),
  agentId: idText.optional(),
  merge: z.boolean().optional(),
});

export const mcpNameParam = z.object({ name: z.string().min(1).max(100) });
export const promptParams = z.object({
  name: z.string().min(1).max(100),
  prompt: z.string().min(1).max(200),
});
/** A prompt's arguments (MCP prompt arguments are strings). */
export const promptArgsSchema = z
  .object({ arguments: z.record(z.string().max(100), z.string().max(10_000)).optional() })
  .strict();

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** One OpenAI chat message; tool and function turns are refused later with a clear message. */
export const chatMessageSchema = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: z
    .union([z.string().max(256 * 1024), z.array(contentPart).max(100)], {
      error: "content must be a string or an array of text parts",
    })
    .nullable()
    .optional(),
});

export const chatCompletionSchema = z.looseObject({
  model: z.string().min(1, "name an agent id as the model").max(100),
  messages: z
    .array(chatMessageSchema)
    .min(1, "send at least one message: the conversation is empty")
    .max(500),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  response_format: z
    .discriminatedUnion("type", [
      z.looseObject({ type: z.literal("text") }),
      z.looseObject({ type: z.literal("json_object") }),
      z.looseObject({
        type: z.literal("json_schema"),
        json_schema: z.looseObject({
          name: z.string().min(1).max(64),
          schema: answerFormatSchema.optional(),
          strict: z.boolean().nullable().optional(),
        }),
      }),
    ])
    .nullable()
    .optional(),
});

export type ChatCompletionRequest = z.output<typeof chatCompletionSchema>;
export type ChatMessageInput = z.output<typeof chatMessageSchema>;

/** `POST /api/mcp`: a stdio server (owners and admins) or a remote one by URL. */
export const addMcpServerSchema = z.union([
  z.object({
    name: z.string().max(64),
    transport: z.literal("stdio"),
    command: z.string().min(1).max(1000),
    args: z.array(z.string().max(4000)).max(100).default([]),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(10_000)).optional(),
    ...visibilityFields,
  }),
  z.object({
    name: z.string().max(64),
    transport: z.literal("http").optional(),
    url: z.string().min(1).max(2000),
    oauth: z
      .object({ clientId: z.string().min(1).max(500).optional(), scope: z.string().max(500).optional() })
      .optional(),
    ...visibilityFields,
  }),
]);
/** Who sees an MCP server added in Settings (`PATCH /api/mcp/:name`). */
export const mcpVisibilitySchema = z.object(visibilityFields);
