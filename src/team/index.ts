/** The team domain: agents with personas, channels, mention routing, runs, call_agent and flows. */

export { conflict, forbidden, invalid, isRefusal, notFound } from "../errors.js";
export { CALL_AGENT_TOOL, MAX_CALL_DEPTH } from "./call-agent-tool.js";
export { type MentionCandidate, type ParsedMentions, parseMentions } from "./mentions.js";
export { PersonaFiles, SOUL_FILE_NAME } from "./personas.js";
export { STARTER_AGENTS } from "./starter-agents.js";
export { createTeam, type TeamDeps } from "./team.js";
export type * from "./types.js";
