/**
 * The A2A agent cards of Dimsum agents: the 1.0 card (`supportedInterfaces`, JSON-RPC at
 * `/a2a/<agentId>` in versions 1.0 and 0.3, bearer auth with a Dimsum API token) and the same card in
 * 0.3's shape for clients that ask without `A2A-Version` (or with 0.3).
 */
import { AgentCard } from "@a2a-js/sdk";
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3";

/** What a card says about one agent. */
export interface PublishedAgent {
  id: string;
  name: string;
  description: string;
  /** Absolute URL of its JSON-RPC endpoint. */
  url: string;
}

const VERSION = "1.0.0";
const TEXT_MODES = ["text/plain"];

/** Whether a request with this `A2A-Version` header gets 0.3's shapes (absent means 0.3). */
export function wantsLegacy(versionHeader: string | undefined): boolean {
  const v = versionHeader?.trim();
  return v === undefined || v === "" || v === "0.3" || v.startsWith("0.3.");
}

/** One skill a card lists: each agent of the team card, or an agent's own "chat". */
export interface PublishedSkill {
  id: string;
  name: string;
  description: string;
}

/** An agent's own skill: to be asked. */
function chatSkill(agent: PublishedAgent): PublishedSkill {
  return { id: "chat", name: `Ask ${agent.name}`, description: agent.description };
}

/** The 1.0 card in its JSON form (what is sent to 1.0 clients). */
function cardJson(agent: PublishedAgent, skills: readonly PublishedSkill[]): Record<string, unknown> {
  return {
    name: agent.name,
    description: agent.description,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url: agent.url, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" }],
      ["JSONRPC"],
    ),
    provider: { organization: "Dimsum", url: new URL(agent.url).origin },
    version: VERSION,
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: {
      dimsumToken: {
        httpAuthSecurityScheme: {
          scheme: "bearer",
          bearerFormat: "Dimsum API token",
          description: "A Dimsum API token (Settings → API tokens); the agent acts as its person.",
        },
      },
    },
    securityRequirements: [{ schemes: { dimsumToken: { list: [] } } }],
    defaultInputModes: TEXT_MODES,
    defaultOutputModes: TEXT_MODES,
    skills: skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: ["dimsum", skill.id === "chat" ? "chat" : "agent"],
      inputModes: TEXT_MODES,
      outputModes: TEXT_MODES,
    })),
  };
}

/** The 1.0 card, as the SDK's request handler takes it. */
export function agentCardOf(agent: PublishedAgent, skills?: readonly PublishedSkill[]): AgentCard {
  return AgentCard.fromJSON(cardJson(agent, skills ?? [chatSkill(agent)]));
}

/** The card as sent: 1.0's JSON, or 0.3's shape for older clients. */
export function agentCardJson(
  agent: PublishedAgent,
  legacy: boolean,
  skills?: readonly PublishedSkill[],
): unknown {
  const listed = skills ?? [chatSkill(agent)];
  if (!legacy) return AgentCard.toJSON(agentCardOf(agent, listed));
  return {
    protocolVersion: "0.3.0",
    name: agent.name,
    description: agent.description,
    url: agent.url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url: agent.url, transport: "JSONRPC" }],
    provider: { organization: "Dimsum", url: new URL(agent.url).origin },
    version: VERSION,
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: {
      dimsumToken: { type: "http", scheme: "bearer", bearerFormat: "Dimsum API token" },
    },
    security: [{ dimsumToken: [] }],
    defaultInputModes: TEXT_MODES,
    defaultOutputModes: TEXT_MODES,
    skills: listed.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: ["dimsum", skill.id === "chat" ? "chat" : "agent"],
    })),
  };
}
