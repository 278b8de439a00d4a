/**
 * Arithmetic without eval: a tokenizer, a recursive-descent parser producing a small tree, and an
 * evaluator. The whole expression is parsed before anything is computed, so syntax errors win over
 * runtime ones. Positions in messages are 1-based character offsets into the expression.
 *
 * Grammar (lowest precedence first):
 *   sum     = product (("+" | "-") product)*
 *   product = unary (("*" | "/" | "%") unary)*
 *   unary   = ("-" | "+") unary | power
 *   power   = primary (("^" | "**") unary)?     right-associative; -2^2 = -(2^2), 2^-1 = 0.5
 *   primary = number | constant | name "(" args ")" | "(" sum ")"
 */
import { DimsumError } from "../../errors.js";

type Token =
  | { type: "number"; value: number; text: string; pos: number }
  | { type: "name"; text: string; pos: number }
  | { type: "op"; text: string; pos: number }
  | { type: "end"; text: ""; pos: number };

type Node =
  | { kind: "number"; value: number }
  | { kind: "unary"; op: "-" | "+"; operand: Node }
  | { kind: "binary"; op: string; left: Node; right: Node; pos: number }
  | { kind: "call"; name: string; args: Node[]; pos: number };

interface FunctionSpec {
  minArgs: number;
  maxArgs: number;
  apply(args: number[], pos: number): number;
}

const CONSTANTS: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E };

const unary = (fn: (x: number) => number): FunctionSpec => ({
  minArgs: 1,
  maxArgs: 1,
  apply: ([x]) => fn(x!),
});

function positive(name: string, fn: (x: number) => number): FunctionSpec {
  return {
    minArgs: 1,
    maxArgs: 1,
    apply: ([x], pos) => {
      if (x! <= 0) throw fail(`${name} is only defined for positive numbers, got ${x} (at position ${pos})`);
      return fn(x!);
    },
  };
}

const FUNCTIONS: Readonly<Record<string, FunctionSpec>> = {
  sqrt: {
    minArgs: 1,
    maxArgs: 1,
    apply: ([x], pos) => {
      if (x! < 0) throw fail(`sqrt of a negative number (${x}) at position ${pos}`);
      return Math.sqrt(x!);
    },
  },
  abs: unary(Math.abs),
  floor: unary(Math.floor),
  ceil: unary(Math.ceil),
  exp: unary(Math.exp),
  sin: trig(Math.sin),
  cos: trig(Math.cos),
  tan: trig(Math.tan),
  atan: unary(Math.atan),
  asin: unitRange("asin", Math.asin),
  acos: unitRange("acos", Math.acos),
  ln: positive("ln", Math.log),
  log10: positive("log10", Math.log10),
  log2: positive("log2", Math.log2),
  log: {
    minArgs: 1,
    maxArgs: 2,
    apply: ([x, base], pos) => {
      if (x! <= 0) throw fail(`log is only defined for positive numbers, got ${x} (at position ${pos})`);
      if (base === undefined) return Math.log(x!);
      if (base <= 0 || base === 1)
        throw fail(`log base must be positive and not 1, got ${base} (at position ${pos})`);
      return Math.log(x!) / Math.log(base);
    },
  },
  round: { minArgs: 1, maxArgs: 2, apply: ([x, digits], pos) => roundTo(x!, digits ?? 0, pos) },
  min: { minArgs: 1, maxArgs: Number.POSITIVE_INFINITY, apply: (args) => Math.min(...args) },
  max: { minArgs: 1, maxArgs: Number.POSITIVE_INFINITY, apply: (args) => Math.max(...args) },
  pow: {
    minArgs: 2,
    maxArgs: 2,
    apply: ([x, y], pos) => {
      if (x === 0 && y! < 0) throw fail(`division by zero (0 to a negative power) at position ${pos}`);
      return x! ** y!;
    },
  },
};

/** sin(pi) is 1.2e-16 in floating point; for trigonometry such a value is noise around an exact 0. */
function trig(fn: (x: number) => number): FunctionSpec {
  return unary((x) => {
    const y = fn(x);
    return Math.abs(y) < 1e-15 ? 0 : y;
  });
}

function unitRange(name: string, fn: (x: number) => number): FunctionSpec {
  return {
    minArgs: 1,
    maxArgs: 1,
    apply: ([x], pos) => {
      if (x! < -1 || x! > 1)
        throw fail(`${name} is only defined between -1 and 1, got ${x} (at position ${pos})`);
      return fn(x!);
    },
  };
}

/** Rounds half away from zero; scaling goes through toPrecision so 2.345 rounds to 2.35, not 2.34. */
function roundTo(x: number, digits: number, pos: number): number {
  if (!Number.isInteger(digits) || Math.abs(digits) > 15) {
    throw fail(`round digits must be a whole number between -15 and 15, got ${digits} (at position ${pos})`);
  }
  const factor = 10 ** digits;
  const scaled = Number((Math.abs(x) * factor).toPrecision(15));
  return (Math.sign(x) * Math.round(scaled)) / factor;
}

/** The names the calculator knows, for its description and error messages. */
export const CALCULATOR_FUNCTIONS: readonly string[] = Object.keys(FUNCTIONS);
export const CALCULATOR_CONSTANTS: readonly string[] = Object.keys(CONSTANTS);

function fail(message: string): DimsumError {
  return new DimsumError("tool_args", message, { hint: "fix the expression and try again" });
}

function describe(token: Token): string {
  return token.type === "end" ? "the end of the expression" : `\`${token.text}\` at position ${token.pos}`;
}

/** Splits an expression into numbers, names and operators. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const numberPattern = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
  const namePattern = /[A-Za-z_][A-Za-z0-9_]*/y;
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    numberPattern.lastIndex = i;
    const number = numberPattern.exec(source);
    if (number) {
      tokens.push({ type: "number", value: Number(number[0]), text: number[0], pos: i + 1 });
      i += number[0].length;
      continue;
    }
    namePattern.lastIndex = i;
    const name = namePattern.exec(source);
    if (name) {
      tokens.push({ type: "name", text: name[0], pos: i + 1 });
      i += name[0].length;
      continue;
    }
    if (source.startsWith("**", i)) {
      tokens.push({ type: "op", text: "**", pos: i + 1 });
      i += 2;
      continue;
    }
    if ("+-*/%^(),".includes(ch)) {
      tokens.push({ type: "op", text: ch, pos: i + 1 });
      i++;
      continue;
    }
    throw fail(`unexpected character \`${ch}\` at position ${i + 1}`);
  }
  tokens.push({ type: "end", text: "", pos: source.length + 1 });
  return tokens;
}

class Parser {
  #index = 0;
  readonly #tokens: Token[];

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parse(): Node {
    const node = this.#sum();
    const next = this.#peek();
    if (next.type !== "end") {
      if (next.text === ")") {
        throw fail(`unbalanced parentheses: \`)\` at position ${next.pos} has no matching \`(\``);
      }
      throw fail(`unexpected ${describe(next)}: expected an operator or the end of the expression`);
    }
    return node;
  }

  #peek(): Token {
    return this.#tokens[this.#index]!;
  }

  #next(): Token {
    const token = this.#tokens[this.#index]!;
    if (token.type !== "end") this.#index++;
    return token;
  }

  #isOp(...ops: string[]): boolean {
    const token = this.#peek();
    return token.type === "op" && ops.includes(token.text);
  }

  #sum(): Node {
    let left = this.#product();
    while (this.#isOp("+", "-")) {
      const op = this.#next();
      left = { kind: "binary", op: op.text, left, right: this.#product(), pos: op.pos };
    }
    return left;
  }

  #product(): Node {
    let left = this.#unary();
    while (this.#isOp("*", "/", "%")) {
      const op = this.#next();
      left = { kind: "binary", op: op.text, left, right: this.#unary(), pos: op.pos };
    }
    return left;
  }

  #unary(): Node {
    if (this.#isOp("-", "+")) {
      const op = this.#next().text as "-" | "+";
      return { kind: "unary", op, operand: this.#unary() };
    }
    return this.#power();
  }

  #power(): Node {
    const base = this.#primary();
    if (!this.#isOp("^", "**")) return base;
    const op = this.#next();
    // The exponent is a unary so that 2^-1 works and 2^3^2 groups to the right.
    return { kind: "binary", op: "^", left: base, right: this.#unary(), pos: op.pos };
  }

  #primary(): Node {
    const token = this.#next();
    if (token.type === "number") {
      if (!Number.isFinite(token.value))
        throw fail(`number \`${token.text}\` at position ${token.pos} is too large`);
      return { kind: "number", value: token.value };
    }
    if (token.type === "name") return this.#name(token);
    if (token.type === "op" && token.text === "(") {
      const inner = this.#sum();
      this.#closeParen(token.pos);
      return inner;
    }
    if (token.type === "end") {
      throw fail(
        this.#tokens.length === 1
          ? "empty expression: write something like 2 * (3 + 4)"
          : `the expression ends too early at position ${token.pos}: expected a number, a name or \`(\``,
      );
    }
    throw fail(`unexpected ${describe(token)}: expected a number, a name or \`(\``);
  }

  #closeParen(openPos: number): void {
    const token = this.#peek();
    if (token.type === "op" && token.text === ")") {
      this.#next();
      return;
    }
    if (token.type === "end")
      throw fail(`unbalanced parentheses: \`(\` at position ${openPos} is never closed`);
    throw fail(`unexpected ${describe(token)}: expected \`)\` to close the \`(\` at position ${openPos}`);
  }

  #name(token: Token): Node {
    const name = token.text.toLowerCase();
    const isCall = this.#isOp("(");
    if (!isCall) {
      // hasOwn: names like `constructor` must not reach Object.prototype.
      if (Object.hasOwn(CONSTANTS, name)) return { kind: "number", value: CONSTANTS[name]! };
      if (Object.hasOwn(FUNCTIONS, name)) {
        throw fail(`\`${token.text}\` at position ${token.pos} is a function: call it like ${name}(...)`);
      }
      throw fail(
        `unknown name \`${token.text}\` at position ${token.pos} (constants: ${CALCULATOR_CONSTANTS.join(", ")})`,
      );
    }
    const spec = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
    if (!spec) {
      throw fail(
        `unknown function \`${token.text}\` at position ${token.pos} (functions: ${CALCULATOR_FUNCTIONS.join(", ")})`,
      );
    }
    const open = this.#next();
    const args: Node[] = [];
    if (!this.#isOp(")")) {
      args.push(this.#sum());
      while (this.#isOp(",")) {
        this.#next();
        args.push(this.#sum());
      }
    }
    this.#closeParen(open.pos);
    if (args.length < spec.minArgs || args.length > spec.maxArgs) {
      throw fail(`${name}() at position ${token.pos} takes ${arityText(spec)}, got ${args.length}`);
    }
    return { kind: "call", name, args, pos: token.pos };
  }
}

function arityText(spec: FunctionSpec): string {
  const plural = (n: number) => `${n} argument${n === 1 ? "" : "s"}`;
  if (spec.minArgs === spec.maxArgs) return plural(spec.minArgs);
  if (spec.maxArgs === Number.POSITIVE_INFINITY) return `at least ${plural(spec.minArgs)}`;
  return `${spec.minArgs} or ${plural(spec.maxArgs)}`;
}

function evaluateNode(node: Node): number {
  switch (node.kind) {
    case "number":
      return node.value;
    case "unary":
      return node.op === "-" ? -evaluateNode(node.operand) : evaluateNode(node.operand);
    case "call":
      return FUNCTIONS[node.name]!.apply(node.args.map(evaluateNode), node.pos);
    case "binary": {
      const left = evaluateNode(node.left);
      const right = evaluateNode(node.right);
      switch (node.op) {
        case "+":
          return left + right;
        case "-":
          return left - right;
        case "*":
          return left * right;
        case "/":
        case "%":
          if (right === 0) throw fail(`division by zero at position ${node.pos}`);
          return node.op === "/" ? left / right : left % right;
        default:
          if (left === 0 && right < 0)
            throw fail(`division by zero (0 to a negative power) at position ${node.pos}`);
          return left ** right;
      }
    }
  }
}

/** Parses and evaluates an expression; throws DimsumError('tool_args') with a position on bad input. */
export function evaluateExpression(expression: string): number {
  const result = evaluateNode(new Parser(tokenize(expression)).parse());
  if (Number.isNaN(result)) throw fail("the result is not a real number");
  if (!Number.isFinite(result)) throw fail("the result is too large to represent");
  return result;
}
