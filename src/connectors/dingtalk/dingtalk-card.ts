/**
 * DingTalk interactive cards (互动卡片) from the app's card template, for approval prompts, flow
 * progress and streamed answers. The template is built once in DingTalk's card platform with four
 * variables, all strings: `title` (text), `markdown` (Markdown), `buttons` (a JSON list of `{text,
 * action}`, shown as a button group whose buttons call back with the parameter `action` set to the
 * item's `action`) and `notice` (text, sent to the presser alone). Buttons carry only the button
 * data (`dap:<choice>:<token>`, see `approval-buttons.ts`); a press arrives over Stream mode on the
 * topic `/v1.0/card/instances/callback` and is answered with the card's new variables: the settled
 * prompt for everyone, or a short refusal in the presser's own `notice` (the card stays as it was).
 */
import {
  approvalBody,
  approvalButtons,
  approvalTitle,
  decodeButtonData,
  encodeButtonData,
} from "../approval-buttons.js";
import { FLOW_BUTTONS } from "../flow-cards.js";
import type { ApprovalPress, ApprovalPressResult, ApprovalPrompt, FlowCard } from "../types.js";

export const DINGTALK_CARD_TOPIC = "/v1.0/card/instances/callback";

/** The variables of an approval prompt's card: buttons while it waits, the decision once settled. */
export function approvalCardParams(prompt: ApprovalPrompt): Record<string, string> {
  const buttons = prompt.decision
    ? []
    : approvalButtons(prompt).map((b) => ({
        text: b.label,
        action: encodeButtonData(prompt.token, b.choice),
      }));
  return {
    title: approvalTitle(prompt),
    markdown: approvalBody(prompt).replace(/\n/g, "  \n"),
    buttons: JSON.stringify(buttons),
  };
}

/** The variables of a flow's progress card. */
export function flowCardParams(card: FlowCard): Record<string, string> {
  return {
    title: card.title,
    markdown: card.lines.join("  \n"),
    buttons: JSON.stringify(
      card.buttons.map((choice) => ({
        text: FLOW_BUTTONS[choice],
        action: encodeButtonData(card.token, choice),
      })),
    ),
  };
}

/** The variables of an answer's card (a streamed preview, then the whole answer). */
export function answerCardParams(title: string, markdown: string): Record<string, string> {
  return { title, markdown, buttons: "[]" };
}

/** A card callback as DingTalk sends it over Stream mode (the fields read). */
interface CardCallback {
  outTrackId?: unknown;
  userId?: unknown;
  /** JSON: `{cardPrivateData: {actionIds, params}}` (`value` in some callbacks). */
  content?: unknown;
  value?: unknown;
}

function actionOf(raw: unknown): unknown {
  if (typeof raw !== "string") return undefined;
  try {
    const parsed = JSON.parse(raw) as { cardPrivateData?: { params?: { action?: unknown } } };
    return parsed.cardPrivateData?.params?.action;
  } catch {
    return undefined;
  }
}

/** The press of a card callback's data; undefined for anything that is not one of Dimsum's buttons. */
export function pressOfCardCallback(data: string): ApprovalPress | undefined {
  let callback: CardCallback;
  try {
    callback = JSON.parse(data) as CardCallback;
  } catch {
    return undefined;
  }
  const decoded = decodeButtonData(actionOf(callback.content) ?? actionOf(callback.value));
  const userId = typeof callback.userId === "string" && callback.userId !== "" ? callback.userId : undefined;
  if (!decoded || !userId) return undefined;
  return { ...decoded, user: { id: userId } };
}

/** The answer to a card callback: the presser's notice, and the settled prompt when it changed. */
export function cardCallbackResponse(result: ApprovalPressResult): Record<string, unknown> {
  return {
    cardUpdateOptions: { updateCardDataByKey: true, updatePrivateDataByKey: true },
    ...(result.prompt ? { cardData: { cardParamMap: approvalCardParams(result.prompt) } } : {}),
    userPrivateData: { cardParamMap: { notice: `${result.ok ? "✅" : "⚠️"} ${result.notice}` } },
  };
}
