/**
 * The shapes of an agent's settings, shared by the API's agent bodies and the template file: sizes
 * and kinds only (the agent service checks tool names, models and schemas).
 */
import * as z from "zod";

/** Largest SOUL.md persona, in characters. */
export const MAX_SOUL_CHARS = 256 * 1024;

/** A list of names (tools, skills, knowledge bases), each 1–100 characters. */
export const nameList = (max: number) =>
  z
    .array(z.string().min(1, "empty name").max(100, "at most 100 characters"))
    .max(max, `at most ${max} entries`);

/** An agent's answer format: a JSON Schema object (checked as a schema by the agent service), at most 20 kB. */
export const answerFormatSchema = z
  .record(z.string(), z.unknown())
  .refine((schema) => JSON.stringify(schema).length <= 20_000, "at most 20,000 characters of JSON");

export const reasoningSchema = z.enum(["off", "low", "medium", "high"]);

/** The settings an agent is created with besides its id, name, emoji, model and persona. */
export const agentSettingsFields = {
  reasoning: reasoningSchema.optional(),
  toolsAllow: nameList(200).optional(),
  toolsDeny: nameList(200).optional(),
  memory: z.boolean().optional(),
  skills: nameList(100).optional(),
  knowledgeBases: nameList(100).optional(),
  askFirst: nameList(200).optional(),
  answerFormat: answerFormatSchema.optional(),
};
