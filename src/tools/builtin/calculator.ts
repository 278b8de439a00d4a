/** The calculator tool: exact arithmetic so the model does not have to do sums in its head. */
import * as z from "zod";
import { DimsumError } from "../../errors.js";
import { defineTool } from "../types.js";
import { CALCULATOR_CONSTANTS, CALCULATOR_FUNCTIONS, evaluateExpression } from "./calculator-parser.js";

/** Prints integers as integers and trims float noise (0.1 + 0.2 -> 0.3) to 15 significant digits. */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return "0";
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(15)));
}

/** Evaluates `expression` and formats the result; throws DimsumError('tool_args') on bad input. */
export function calculate(expression: string): string {
  return formatNumber(evaluateExpression(expression));
}

export const calculatorTool = defineTool({
  name: "calculator",
  // Read-only: run again after a restart interrupted it.
  idempotent: true,
  description:
    "Evaluate an arithmetic expression and return the number. Operators: + - * / % (remainder) ^ (power, " +
    `also **), parentheses. Functions: ${CALCULATOR_FUNCTIONS.join(", ")} (log(x) is natural, log(x, base); ` +
    `round(x, digits); trigonometry in radians). Constants: ${CALCULATOR_CONSTANTS.join(", ")}.`,
  parameters: z.object({
    expression: z.string().describe("The expression, e.g. `(3 + 4) * 2^10 / sqrt(2)`"),
  }),
  concurrencySafe: true,
  async execute({ expression }) {
    try {
      const value = evaluateExpression(expression);
      return { content: formatNumber(value), data: { value } };
    } catch (err) {
      if (err instanceof DimsumError) return { content: `Error: ${err.message}`, isError: true };
      throw err;
    }
  },
});
