/**
 * Answers held to a JSON Schema: the instruction that asks for one, the check of the final answer
 * (it must parse, then validate), and the message that sends an invalid answer back once with what
 * was wrong. Where a protocol has native structured output the request asks for it too
 * (`StreamOptions.responseFormat`); the check runs either way, since not every server honours it.
 */
import { DimsumError } from "../errors.js";
import type { JsonSchema, ResponseFormat, UserMessage } from "../llm/types.js";
import { JsonSchemaValidators } from "../tools/json-schema.js";

/** What the final answer must be: JSON valid against `schema`. */
export interface OutputSpec {
  schema: JsonSchema;
  /** A short name for the answer's shape (`^[a-zA-Z0-9_-]{1,64}$`), sent where a protocol wants one. */
  name?: string;
}

export type OutputCheck = { ok: true; value: unknown } | { ok: false; problems: string[] };

const validators = new JsonSchemaValidators();
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Checks answers against one output schema; the constructor throws a `config` error for a bad schema. */
export class OutputChecker {
  readonly format: ResponseFormat;
  readonly #validate: (value: unknown) => string[];

  constructor(spec: OutputSpec) {
    if (typeof spec.schema !== "object" || spec.schema === null || Array.isArray(spec.schema)) {
      throw new DimsumError("config", "The output schema must be a JSON object (a JSON Schema).", {
        hint: 'e.g. {"type": "object", "properties": {"answer": {"type": "string"}}}',
      });
    }
    const name = spec.name ?? "answer";
    if (!NAME.test(name)) {
      throw new DimsumError("config", `The output name "${name}" is not valid.`, {
        hint: "use 1 to 64 letters, digits, _ or -",
      });
    }
    try {
      this.#validate = validators.validatorFor(spec.schema);
    } catch (err) {
      throw new DimsumError("config", `The output schema is not a valid JSON Schema: ${messageOf(err)}`, {
        hint: "check the schema with a JSON Schema validator",
        cause: err,
      });
    }
    this.format = { name, schema: spec.schema };
  }

  /** Whether `answer` is JSON valid against the schema; the parsed value, or what is wrong. */
  check(answer: string): OutputCheck {
    const text = unfenced(answer.trim());
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { ok: false, problems: [`the answer is not JSON (${messageOf(err)})`] };
    }
    const problems = this.#validate(value).map((p) => p.replace(/\bparameter\b/g, "property"));
    return problems.length === 0 ? { ok: true, value } : { ok: false, problems };
  }
}

/** The system prompt's paragraph that asks for the answer's shape (stable across turns). */
export function outputInstruction(spec: OutputSpec): string {
  return [
    "## Answer format",
    "Use tools as needed. Your final answer must be only a JSON value, with no text or code fence around it, valid against this JSON Schema:",
    JSON.stringify(spec.schema),
  ].join("\n");
}

/** The message that sends an invalid answer back, with what was wrong. */
export function correctionMessage(problems: readonly string[]): UserMessage {
  return {
    role: "user",
    content: `Your answer does not follow the required JSON Schema:\n${problems.map((p) => `- ${p}`).join("\n")}\nAnswer again with only the corrected JSON.`,
  };
}

/** The run's error once the corrected answer is invalid too. */
export function invalidOutputError(problems: readonly string[]): DimsumError {
  return new DimsumError(
    "output_invalid",
    `The answer does not follow the output schema: ${problems.join("; ")}`,
    {
      hint: "loosen the schema, describe the fields in the prompt, or use a model with native structured output",
      issues: problems.map((message) => ({ path: "", message })),
    },
  );
}

/** The body of an answer wrapped whole in one code fence (```json … ```), else the answer. */
function unfenced(text: string): string {
  const match = /^```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return match ? match[1]!.trim() : text;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
