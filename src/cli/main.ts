/** CLI entry: parses arguments with commander and loads each command's module only when it runs. */
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { EXIT_OK, EXIT_PIPE, EXIT_USAGE } from "./exit-codes.js";
import { guardOutput } from "./stop-signals.js";

/** Collects a repeatable option's values in order. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

const EFFORTS = ["off", "low", "medium", "high"];

function reasoningEffort(value: string): string {
  if (!EFFORTS.includes(value)) throw new InvalidArgumentError(`expected one of ${EFFORTS.join(", ")}`);
  return value;
}

async function readStdin(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Runs the CLI with the given argv; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const io = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    // A reader that closes our stdout (`dimsum runs --json | head -1`) ends the command quietly.
    output: guardOutput(process.stdout, process.stderr),
  };
  let exitCode = EXIT_OK;
  const program = new Command()
    .name("dimsum")
    .description("Dimsum: an agent runtime for LLMs with tools")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  program
    .command("run")
    .description("run one prompt to completion (prompt from the argument, or stdin with -)")
    .argument("<prompt...>", "what to ask; use - to read stdin")
    .option(
      "-m, --model <provider:model>",
      "model to use, or a fallback chain a:x,b:y tried in order (default: DIMSUM_MODEL)",
    )
    .option("--reasoning <effort>", "reasoning effort: off, low, medium or high", reasoningEffort)
    .option("--json", "print events as JSON Lines on stdout")
    .option("-w, --workspace <dir>", "folder the file and shell tools work in (default: current directory)")
    .option("--max-iterations <n>", "model calls that may use tools before a final answer", positiveInt)
    .option("--tools <names>", "comma-separated tool names to offer (default: all built-ins)")
    .option("-y, --yes", "allow commands the shell policy marks dangerous without asking")
    .option("--network <policy>", "the sandbox's network: off (default), on, or hosts to allow (a.org,b.org)")
    .option("--processes", "offer the process tools: long-running commands that end with this command")
    .option("--browser", "offer the browser tool (Chromium, started on first use)")
    .option("--system <text>", "system prompt")
    .option(
      "-u, --user <id>",
      "continue a stored conversation of this user (default: DIMSUM_USER or your login)",
    )
    .option("-s, --session <id>", "continue this stored session")
    .option("-a, --attach <file>", "attach an image, PDF or text file (repeatable)", collect, [])
    .option(
      "--schema <file>",
      "answer with JSON valid against this JSON Schema file (printed alone on stdout)",
    )
    .action(async (words: string[], options) => {
      const { runCommand } = await import("./commands/run.js");
      const prompt = words.length === 1 && words[0] === "-" ? await readStdin(io.stdin) : words.join(" ");
      exitCode = await runCommand(prompt, options, io);
    });

  program
    .command("chat", { isDefault: false })
    .description("interactive chat in a stored session (history survives restarts)")
    .option("-u, --user <id>", "user id (default: DIMSUM_USER or your login)")
    .option("-s, --session <id>", "session id; reopening one loads its history", "default")
    .option("-m, --model <provider:model>", "model to use (default: DIMSUM_MODEL)")
    .option("-w, --workspace <dir>", "folder the file and shell tools work in (default: current directory)")
    .option("--tools <names>", "comma-separated tool names to offer (default: all built-ins)")
    .option("--max-iterations <n>", "model calls that may use tools before a final answer", positiveInt)
    .option("-y, --yes", "allow commands the shell policy marks dangerous without asking")
    .option("--network <policy>", "the sandbox's network: off (default), on, or hosts to allow (a.org,b.org)")
    .option("--processes", "offer the process tools: long-running commands that end with this command")
    .option("--browser", "offer the browser tool (Chromium, started on first use)")
    .option("--system <text>", "system prompt")
    .option("-a, --attach <file>", "attach a file to the first message (repeatable)", collect, [])
    .action(async (options) => {
      const { chatCommand } = await import("./commands/chat.js");
      exitCode = await chatCommand(options, io);
    });

  program
    .command("runs")
    .description("list the runs of a session, newest first")
    .option("-u, --user <id>", "user id")
    .option("-s, --session <id>", "session id", "default")
    .option("--json", "JSON Lines output")
    .action(async (options) => {
      const { runsCommand } = await import("./commands/runs.js");
      exitCode = await runsCommand(options, io);
    });

  program
    .command("trace")
    .description("show what a run did: model calls, tool calls, results, errors")
    .argument("<runId>", "run id (from dimsum runs or the JSON output)")
    .option("-u, --user <id>", "user id")
    .option("--json", "JSON Lines output")
    .action(async (runId: string, options) => {
      const { traceCommand } = await import("./commands/runs.js");
      exitCode = await traceCommand(runId, options, io);
    });

  program
    .command("serve")
    .description("start the team server: HTTP API, WebSocket and web UI")
    .option("-p, --port <n>", "port to listen on (default: $PORT, else 18800)", positiveInt)
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .action(async (options) => {
      const { serveCommand } = await import("./commands/serve.js");
      exitCode = await serveCommand(options, io);
    });

  const mcp = program
    .command("mcp")
    .description("MCP servers from mcp.json: inspect, call, or serve Dimsum's tools");
  mcp
    .command("list")
    .description("configured servers with status, tool counts and last error")
    .option("--json", "JSON output")
    .action(async (options) => {
      const { mcpListCommand } = await import("./commands/mcp.js");
      exitCode = await mcpListCommand(options, io);
    });
  mcp
    .command("tools")
    .description("the tools one server offers")
    .argument("<server>", "server name from mcp.json")
    .option("--json", "JSON output")
    .action(async (server: string, options) => {
      const { mcpToolsCommand } = await import("./commands/mcp.js");
      exitCode = await mcpToolsCommand(server, options, io);
    });
  mcp
    .command("call")
    .description("call one tool for debugging")
    .argument("<server>", "server name")
    .argument("<tool>", "tool name")
    .argument("[json]", "arguments as JSON", "{}")
    .option("--json", "JSON output")
    .option("--timeout <ms>", "call timeout in milliseconds", positiveInt)
    .action(async (server: string, tool: string, json: string, options) => {
      const { mcpCallCommand } = await import("./commands/mcp.js");
      exitCode = await mcpCallCommand(server, tool, json, options, io);
    });
  mcp
    .command("login")
    .description("sign in to a remote MCP server (OAuth in the browser; tokens stored encrypted)")
    .argument("<server>", "server name from mcp.json")
    .option("--no-browser", "only print the authorization URL")
    .option("--timeout <ms>", "how long to wait for the sign-in", positiveInt)
    .action(async (server: string, options) => {
      const { mcpLoginCommand } = await import("./commands/mcp-login.js");
      exitCode = await mcpLoginCommand(server, options, io);
    });
  mcp
    .command("logout")
    .description("revoke and delete the stored sign-in of a remote MCP server")
    .argument("<server>", "server name from mcp.json")
    .action(async (server: string) => {
      const { mcpLogoutCommand } = await import("./commands/mcp-login.js");
      exitCode = await mcpLogoutCommand(server, io);
    });
  mcp
    .command("serve")
    .description("serve Dimsum's built-in tools over MCP stdio")
    .option("-w, --workspace <dir>", "folder the file and shell tools work in")
    .option("--tools <names>", "comma-separated tool names to expose")
    .action(async (options) => {
      const { mcpServeCommand } = await import("./commands/mcp.js");
      exitCode = await mcpServeCommand(options, io);
    });

  program
    .command("memory")
    .description("long-term memory of a user: list, search, add, forget, or import a JSON Lines file")
    .argument("<action>", "list | search | add | forget | import")
    .argument("[args...]", "query (search), text (add), memory id (forget) or file.jsonl (import)")
    .option("-u, --user <id>", "user id (default: DIMSUM_USER or your login)")
    .option("--agent <id>", "only this agent's memories")
    .option("--type <type>", "semantic | episodic | procedural")
    .option("--limit <n>", "how many to show", positiveInt)
    .option("--tags <tags>", "comma-separated tags (add)")
    .option("--importance <n>", "1-10 (add)", positiveInt)
    .option("--merge", "import: fold lines into near-duplicate memories, as add does (slower)")
    .option("--json", "JSON output")
    .action(async (action: string, args: string[], options) => {
      const { memoryCommand } = await import("./commands/memory.js");
      exitCode = await memoryCommand(action, args, options, io);
    });

  program
    .command("kb")
    .description("knowledge bases: add files or folders, list, remove, reindex, search, status")
    .argument("<action>", "add | list | remove | reindex | search | status")
    .argument("[args...]", "kb name, then files/folders (add), a document (remove) or a query (search)")
    .option("--agent <id>", "a knowledge base of one agent")
    .option("--json", "JSON output")
    .option("--limit <n>", "passages to show (search)", positiveInt)
    .option("--max-files <n>", "refuse batches with more files", positiveInt)
    .option("--max-file-mb <n>", "refuse files larger than this", positiveInt)
    .option("--rerank", "rerank the top passages with the model (search)")
    .option("-m, --model <provider:model>", "model for --rerank")
    .action(async (action: string, args: string[], options) => {
      const { kbCommand } = await import("./commands/kb.js");
      exitCode = await kbCommand(action, args, options, io);
    });

  program
    .command("skills")
    .description("list the skills found in ~/.dimsum/skills and ./skills, with any load errors")
    .option("--json", "JSON output")
    .action(async (options) => {
      const { skillsCommand } = await import("./commands/skills.js");
      exitCode = await skillsCommand(options, io);
    });

  program
    .command("audit")
    .description("check the audit log's hash chain: reports edited and deleted entries (exit 1)")
    .argument("<action>", "verify")
    .option("--json", "JSON output")
    .action(async (action, options) => {
      const { auditCommand } = await import("./commands/audit.js");
      exitCode = await auditCommand(action, options, io);
    });

  program
    .command("migrate")
    .description("copy this home's SQLite database into PostgreSQL, to run several instances (idempotent)")
    .option("--to <url>", "postgres://user@host:5432/database (default DIMSUM_DATABASE_URL)")
    .option("--json", "JSON output: the counts of every table")
    .action(async (options) => {
      const { migrateCommand } = await import("./commands/migrate.js");
      exitCode = await migrateCommand(options, io);
    });

  program
    .command("schedule")
    .description("schedules of agents and chains: list, add, rm, or run one now (via the running server)")
    .argument("<action>", "list | add | rm | run")
    .argument("[id]", "schedule id (rm, run)")
    .option("--name <name>", "schedule name (add)")
    .option("--cron <expression>", "cron expression, e.g. '0 9 * * 1-5' (add)")
    .option("--tz <zone>", "IANA time zone of --cron (default UTC)")
    .option("--at <iso>", "run once at this ISO 8601 time (add)")
    .option("--every <seconds>", "run every N seconds, at least 60 (add)", positiveInt)
    .option("--channel <id>", "channel the run posts in (add)")
    .option("--agent <id>", "agent that answers --prompt (add)")
    .option("--prompt <text>", "what the agent is asked (add)")
    .option("--chain <input>", "start the channel's collaboration chain with this input (add)")
    .option("--missed <policy>", "runs missed while the server was down: skip | run_once (add)")
    .option("--owner <username>", "account the runs act as (default: the server's owner)")
    .option("--disabled", "create it switched off (add)")
    .option("--no-wait", "run: only queue the run")
    .option("--timeout <seconds>", "run: how long to wait for the outcome", positiveInt)
    .option("--json", "JSON output")
    .action(async (action: string, id: string | undefined, options) => {
      const { scheduleCommand } = await import("./commands/schedule.js");
      exitCode = await scheduleCommand(action, id === undefined ? [] : [id], options, io);
    });

  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    throw err;
  }
  if (io.output.closed && exitCode === EXIT_OK) return EXIT_PIPE;
  // The EPIPE of the last writes may only arrive after the command returned.
  io.output.onClose(() => {
    if (process.exitCode === undefined || process.exitCode === EXIT_OK) process.exitCode = EXIT_PIPE;
  });
  return exitCode;
}
