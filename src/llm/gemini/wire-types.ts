/** The subset of the Gemini `generateContent` wire format that Dimsum sends and reads. */
import type { JsonSchema } from "../types.js";

export interface GeminiFunctionCall {
  name?: string;
  args?: Record<string, unknown>;
  /** Streamed arguments (`streamFunctionCallArguments`): pieces addressed by JSON path. */
  partialArgs?: GeminiPartialArg[];
  willContinue?: boolean;
}

export interface GeminiPartialArg {
  jsonPath?: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: unknown;
  willContinue?: boolean;
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: { name: string; response: { result: string } | { error: string } };
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parameters?: Record<string, unknown>;
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: "AUTO" | "NONE" } };
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    thinkingConfig?: { includeThoughts: boolean; thinkingBudget?: number };
    responseMimeType?: string;
    responseJsonSchema?: JsonSchema;
  };
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
}

/** One streamed `GenerateContentResponse` chunk; every field is optional because it comes off the network. */
export interface GeminiResponseChunk {
  candidates?: Array<{
    content?: { role?: string; parts?: GeminiPart[] };
    finishReason?: string;
    finishMessage?: string;
  }>;
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: { code?: number; message?: string; status?: string };
}
