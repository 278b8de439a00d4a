/** Asks the person at the terminal before a risky tool call runs. */
import { createInterface } from "node:readline/promises";
import type { ApprovalRequest } from "../tools/types.js";

/** Approval by y/n on the terminal; resolves false on anything but y/yes. */
export function terminalApproval(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): (request: ApprovalRequest) => Promise<boolean> {
  return async (request) => {
    const rl = createInterface({ input, output, terminal: true });
    try {
      const answer = await rl.question(
        `\n${request.tool} wants to run: ${request.summary}\n(${request.reason}) Allow? [y/N] `,
      );
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  };
}

/** Approves everything (`--yes`). */
export const approveAll = async (): Promise<boolean> => true;
