/** The JSON of a config file (config.json, mcp.json, a2a.json), with the error a person can act on. */
import { DimsumError } from "../errors.js";

/** Parses a config file's text; `what` names the file in the error ("MCP config /home/x/mcp.json"). */
export function parseConfigJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new DimsumError("config", `${what} is not valid JSON: ${(err as Error).message}`, {
      hint: "fix the syntax or remove the file",
    });
  }
}
