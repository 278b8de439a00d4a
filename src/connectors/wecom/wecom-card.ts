/**
 * Approval prompts as WeCom template cards (`button_interaction`): the tool and what will happen as
 * the title and description, the reason below, and Approve / Always / Reject buttons whose `key` is
 * the button data (`dap:<choice>:<token>`, nothing that names a run). A press comes back to the
 * callback URL as the event `template_card_event` (`EventKey`, `TaskId`, `ResponseCode`); the card
 * is then settled with `update_template_card`, its buttons replaced by the decision.
 */
import { approvalButtons, approvalTitle, decodeButtonData, encodeButtonData } from "../approval-buttons.js";
import { FLOW_BUTTONS } from "../flow-cards.js";
import type { ApprovalPress, ApprovalPrompt, FlowCard } from "../types.js";

const STYLES = { approve: 1, always: 1, reject: 2 } as const;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The template card of a waiting prompt. */
export function wecomApprovalCard(prompt: ApprovalPrompt): Record<string, unknown> {
  return {
    card_type: "button_interaction",
    main_title: { title: clip(approvalTitle(prompt), 36), desc: clip(prompt.summary, 44) },
    sub_title_text: clip(`${prompt.summary}\nWhy: ${prompt.reason}`, 1000),
    // Letters, digits and _-@ only, unique per card.
    task_id: `dap-${prompt.token}`,
    button_list: approvalButtons(prompt).map((b) => ({
      text: b.label.replace(/^\S+\s/, ""),
      style: STYLES[b.choice],
      key: encodeButtonData(prompt.token, b.choice),
    })),
  };
}

/**
 * A flow's progress card: the title (step k of n, who works) and the steps, with its buttons. WeCom
 * updates a card once per `response_code`, so it is updated when the flow ends (its buttons replaced
 * by the final state); a press's callback brings the fresh code that update then uses.
 */
export function wecomFlowCard(card: FlowCard): Record<string, unknown> {
  return {
    card_type: "button_interaction",
    main_title: {
      title: clip(card.title, 36),
      desc: clip(card.lines.length > 0 ? `${card.lines.length} steps` : "", 44),
    },
    sub_title_text: clip(card.lines.join("\n"), 1000),
    task_id: `dfl-${card.token}`,
    // The card cannot change its buttons as the flow moves on: it offers them all, and a press the
    // flow cannot take now is answered with why.
    button_list: (["pause", "resume", "skip", "retry"] as const).map((choice) => ({
      text: FLOW_BUTTONS[choice].replace(/^\S+\s/, ""),
      style: 1,
      key: encodeButtonData(card.token, choice),
    })),
  };
}

/** A press of a card button, from a decrypted callback's fields; undefined for anything else. */
export function pressOfWecomEvent(fields: Record<string, string>): ApprovalPress | undefined {
  if (fields.MsgType !== "event" || fields.Event !== "template_card_event") return undefined;
  const decoded = decodeButtonData(fields.EventKey);
  const userId = fields.FromUserName;
  if (!decoded || !userId) return undefined;
  return { token: decoded.token, choice: decoded.choice, chatId: userId, user: { id: userId } };
}
