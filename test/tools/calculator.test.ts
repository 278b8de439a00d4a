import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { calculate, calculatorTool, formatNumber } from "../../src/tools/builtin/calculator.js";
import { CALCULATOR_FUNCTIONS, evaluateExpression } from "../../src/tools/builtin/calculator-parser.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ToolContext } from "../../src/tools/types.js";
import { testToolContext } from "../support/tool-context.js";

function errorOf(expression: string): string {
  try {
    evaluateExpression(expression);
  } catch (err) {
    expect(err).toBeInstanceOf(DimsumError);
    expect((err as DimsumError).code).toBe("tool_args");
    return (err as DimsumError).message;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to fail`);
}

describe("calculator: precedence and associativity", () => {
  it.each([
    ["1 + 2 * 3", "7"],
    ["(1 + 2) * 3", "9"],
    ["10 - 4 - 3", "3"],
    ["100 / 10 / 5", "2"],
    ["2 * 3 % 4", "2"],
    ["7 % 3 * 2", "2"],
    ["1 + 10 % 4", "3"],
    ["2 ^ 3 ^ 2", "512"],
    ["(2 ^ 3) ^ 2", "64"],
    ["2 ** 10", "1024"],
    ["-2 ^ 2", "-4"],
    ["(-2) ^ 2", "4"],
    ["2 ^ -1", "0.5"],
    ["2 ^ -2 ^ 2", "0.0625"],
    ["-3 * -3", "9"],
    ["- - 4", "4"],
    ["+5 - +2", "3"],
    ["2 * 3 ^ 2", "18"],
    ["-(1 + 2) * 4", "-12"],
    ["((((7))))", "7"],
  ])("%s = %s", (expression, expected) => {
    expect(calculate(expression)).toBe(expected);
  });
});

describe("calculator: numbers and formatting", () => {
  it.each([
    ["1.5e3", "1500"],
    ["2.5E-2", "0.025"],
    [".5 + 5.", "5.5"],
    ["1e+2", "100"],
    ["0.1 + 0.2", "0.3"],
    ["1 / 3", "0.333333333333333"],
    ["3 * 1.1", "3.3"],
    ["10 / 4", "2.5"],
    ["-7 % 3", "-1"],
    ["-0", "0"],
    ["PI", "3.14159265358979"],
    ["2 * pi", "6.28318530717959"],
    ["e", "2.71828182845905"],
  ])("%s = %s", (expression, expected) => {
    expect(calculate(expression)).toBe(expected);
  });

  it("formats integers as integers and trims float noise", () => {
    expect(formatNumber(42)).toBe("42");
    expect(formatNumber(-0)).toBe("0");
    expect(formatNumber(0.30000000000000004)).toBe("0.3");
    expect(formatNumber(1e21)).toBe("1e+21");
  });
});

describe("calculator: functions", () => {
  const cases: Array<[string, string]> = [
    ["sqrt(16)", "4"],
    ["sqrt(2)", "1.4142135623731"],
    ["abs(-3.5)", "3.5"],
    ["round(2.5)", "3"],
    ["round(-2.5)", "-3"],
    ["round(2.345, 2)", "2.35"],
    ["round(1234.5, -2)", "1200"],
    ["floor(-1.5)", "-2"],
    ["ceil(1.2)", "2"],
    ["min(3, 1, 2)", "1"],
    ["min(5)", "5"],
    ["max(3, 9, 2, 7)", "9"],
    ["log(e)", "1"],
    ["log(8, 2)", "3"],
    ["log(1000, 10)", "3"],
    ["log10(1000)", "3"],
    ["log2(1024)", "10"],
    ["ln(e ^ 2)", "2"],
    ["exp(0)", "1"],
    ["exp(1)", "2.71828182845905"],
    ["sin(pi / 2)", "1"],
    ["sin(pi)", "0"],
    ["cos(0)", "1"],
    ["cos(pi)", "-1"],
    ["tan(pi / 4)", "1"],
    ["asin(1)", "1.5707963267949"],
    ["acos(1)", "0"],
    ["atan(1) * 4", "3.14159265358979"],
    ["pow(2, 8)", "256"],
    ["pow(9, 0.5)", "3"],
    ["SQRT(4) + Max(1, 2)", "4"],
    ["sqrt(3 ^ 2 + 4 ^ 2)", "5"],
    ["max(1, min(5, 3), -2) * 2", "6"],
  ];
  it.each(cases)("%s = %s", (expression, expected) => {
    expect(calculate(expression)).toBe(expected);
  });

  it("has a test for every function it offers", () => {
    const tested = new Set(
      cases.flatMap(([expr]) => [...expr.toLowerCase().matchAll(/([a-z0-9]+)\(/g)].map((m) => m[1])),
    );
    expect(CALCULATOR_FUNCTIONS.filter((name) => !tested.has(name))).toEqual([]);
  });
});

describe("calculator: errors", () => {
  it.each([
    ["1 / 0", "division by zero at position 3"],
    ["5 % (2 - 2)", "division by zero at position 3"],
    ["0 ^ -1", "division by zero (0 to a negative power) at position 3"],
    ["pow(0, -2)", "division by zero (0 to a negative power) at position 1"],
    ["(1 + 2", "unbalanced parentheses: `(` at position 1 is never closed"],
    ["sqrt(4", "unbalanced parentheses: `(` at position 5 is never closed"],
    ["1 + 2)", "unbalanced parentheses: `)` at position 6 has no matching `(`"],
    ["(1 + 2 3)", "unexpected `3` at position 8: expected `)` to close the `(` at position 1"],
    ["2 3", "unexpected `3` at position 3: expected an operator or the end of the expression"],
    ["2(3)", "unexpected `(` at position 2"],
    ["1.2.3", "unexpected `.3` at position 4"],
    ["1 + * 2", "unexpected `*` at position 5: expected a number, a name or `(`"],
    ["1 +", "the expression ends too early at position 4"],
    ["", "empty expression"],
    ["   ", "empty expression"],
    ["1 $ 2", "unexpected character `$` at position 3"],
    ["foo + 1", "unknown name `foo` at position 1"],
    ["2 * bar(1)", "unknown function `bar` at position 5"],
    ["constructor", "unknown name `constructor`"],
    ["toString(1)", "unknown function `toString`"],
    ["pi(2)", "unknown function `pi`"],
    ["sqrt + 1", "`sqrt` at position 1 is a function"],
    ["round(1, 2, 3)", "round() at position 1 takes 1 or 2 arguments, got 3"],
    ["min()", "min() at position 1 takes at least 1 argument, got 0"],
    ["sqrt(1, 2)", "sqrt() at position 1 takes 1 argument, got 2"],
    ["pow(2)", "pow() at position 1 takes 2 arguments, got 1"],
    ["round(1.5, 0.5)", "round digits must be a whole number"],
    ["sqrt(-4)", "sqrt of a negative number (-4) at position 1"],
    ["log(0)", "log is only defined for positive numbers, got 0"],
    ["log(8, 1)", "log base must be positive and not 1"],
    ["ln(-1)", "ln is only defined for positive numbers"],
    ["log10(0)", "log10 is only defined for positive numbers"],
    ["log2(-8)", "log2 is only defined for positive numbers"],
    ["asin(2)", "asin is only defined between -1 and 1, got 2"],
    ["acos(-1.5)", "acos is only defined between -1 and 1"],
    ["1e999", "number `1e999` at position 1 is too large"],
    ["10 ^ 400", "the result is too large to represent"],
    ["(-8) ^ 0.5", "the result is not a real number"],
  ])("%s -> %s", (expression, message) => {
    expect(errorOf(expression)).toContain(message);
  });

  it("reports syntax errors before evaluating anything", () => {
    expect(errorOf("1 / 0 +")).toContain("ends too early");
  });
});

describe("calculatorTool", () => {
  const ctx = {
    ...testToolContext({ runId: "run" }),
  } satisfies ToolContext;
  const registry = new ToolRegistry([calculatorTool]);

  it("is offered to providers as `calculator` with one required string", () => {
    const [schema] = registry.schemas();
    expect(schema?.name).toBe("calculator");
    expect(schema?.parameters).toMatchObject({
      type: "object",
      properties: { expression: { type: "string" } },
      required: ["expression"],
    });
  });

  it("answers through the registry", async () => {
    const call = registry.prepareCall("calculator", '{"expression":"(3 + 4) * 2 ^ 10"}');
    expect(call.ok).toBe(true);
    if (!call.ok) return;
    expect(await registry.execute(call, ctx)).toEqual({ content: "7168", data: { value: 7168 } });
  });

  it("returns an error result naming the problem", async () => {
    const call = registry.prepareCall("calculator", '{"expression":"1 / (2 - 2)"}');
    if (!call.ok) throw new Error(call.error);
    expect(await registry.execute(call, ctx)).toEqual({
      content: "Error: division by zero at position 3",
      isError: true,
    });
  });

  it("rejects a missing expression before running", () => {
    const call = registry.prepareCall("calculator", "{}");
    expect(call).toEqual({
      ok: false,
      error: "Invalid arguments for `calculator`: missing required parameter `expression`.",
    });
  });
});
