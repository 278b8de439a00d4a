/**
 * Asks the person at the terminal before a call that needs approval runs (the loop's approval phase
 * calls this): y approves once, a approves the tool for the rest of this process, anything else
 * rejects, and the model reads that the user declined.
 */
import { createInterface } from "node:readline/promises";
import { REQUEST_NETWORK_TOOL } from "../tools/builtin/request-network.js";
import type { ApprovalRequest } from "../tools/types.js";

/** The question asked, the same in `dimsum run` and `dimsum chat`. */
export function approvalQuestion(request: ApprovalRequest): string {
  // "dimsum wants network access to registry.npmjs.org": for this run only, so no "always".
  if (request.tool === REQUEST_NETWORK_TOOL) {
    return `${request.summary}\n(${request.reason}) Allow for this run? [y]es / [N]o `;
  }
  return `${request.tool} wants to run: ${request.summary}\n(${request.reason}) Allow? [y]es / [a]lways / [N]o `;
}

/**
 * Turns a y/a/n prompt into an approver that remembers "always" per tool for this process, so the
 * same tool is not asked about again in this chat.
 */
export function rememberingAlways(
  ask: (request: ApprovalRequest) => Promise<string>,
): (request: ApprovalRequest) => Promise<boolean> {
  const always = new Set<string>();
  return async (request) => {
    if (always.has(request.tool)) return true;
    const answer = (await ask(request)).trim();
    if (/^a(lways)?$/i.test(answer) && request.tool !== REQUEST_NETWORK_TOOL) {
      always.add(request.tool);
      return true;
    }
    return /^y(es)?$/i.test(answer);
  };
}

/** Approval by y/a/n on the terminal; resolves false on anything but y, yes, a or always. */
export function terminalApproval(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): (request: ApprovalRequest) => Promise<boolean> {
  return rememberingAlways(async (request) => {
    const rl = createInterface({ input, output, terminal: true });
    try {
      return await rl.question(`\n${approvalQuestion(request)}`);
    } finally {
      rl.close();
    }
  });
}

/** Approves everything (`--yes`). */
export const approveAll = async (): Promise<boolean> => true;
