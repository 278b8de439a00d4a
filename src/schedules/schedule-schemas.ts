/**
 * Shapes of schedule input (HTTP bodies, CLI options); the service checks the rest (time zones, cron
 * syntax, the one-minute floor, channel access).
 */
import * as z from "zod";
import { MIN_INTERVAL_SECONDS } from "./timing.js";

export const MAX_PROMPT_CHARS = 8000;
const idText = z.string().trim().min(1, "required").max(200, "at most 200 characters");
const longText = z
  .string()
  .trim()
  .min(1, "required")
  .max(MAX_PROMPT_CHARS, `at most ${MAX_PROMPT_CHARS} characters`);

export const timingSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("cron"),
    expression: z.string().trim().min(1, "required").max(200, "at most 200 characters"),
    timezone: z.string().trim().min(1, "required").max(100).default("UTC"),
  }),
  z.object({ kind: z.literal("once"), at: z.string().trim().min(1, "required").max(60) }),
  z.object({
    kind: z.literal("interval"),
    seconds: z
      .number()
      .int("a whole number of seconds")
      .min(MIN_INTERVAL_SECONDS, `at least ${MIN_INTERVAL_SECONDS} seconds`),
  }),
]);

export const targetSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("agent"), agentId: idText, prompt: longText, channelId: idText }),
  z.object({ type: z.literal("chain"), channelId: idText, input: longText }),
]);

export const missedPolicySchema = z.enum(["skip", "run_once"]);

const nameText = z.string().trim().min(1, "required").max(100, "at most 100 characters");

export const scheduleInputSchema = z.object({
  name: nameText,
  enabled: z.boolean().optional(),
  timing: timingSchema,
  target: targetSchema,
  missedPolicy: missedPolicySchema.optional(),
});

export const schedulePatchSchema = z
  .object({
    name: nameText.optional(),
    enabled: z.boolean().optional(),
    timing: timingSchema.optional(),
    target: targetSchema.optional(),
    missedPolicy: missedPolicySchema.optional(),
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), "change at least one field");

export const runsQuerySchema = z.object({
  limit: z.coerce.number().int("a whole number").min(1).max(100, "at most 100").optional(),
});
