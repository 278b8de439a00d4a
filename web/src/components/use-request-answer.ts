/**
 * What an inline MCP request card (a request for input, a sampling approval) needs to answer it: the
 * send, whether it is under way, the problem it ran into, and a ref that brings the card into view
 * when it arrives (the question waits for the person). The closing event removes the card.
 */
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import type { ElicitationAnswer, ElicitationView } from "../types.js";

export interface RequestAnswer<E extends HTMLElement> {
  send(answer: ElicitationAnswer): Promise<void>;
  sending: boolean;
  problem: string | undefined;
  card: RefObject<E | null>;
}

export function useRequestAnswer<E extends HTMLElement>(request: ElicitationView): RequestAnswer<E> {
  const { api } = useServices();
  const [problem, setProblem] = useState<string | undefined>();
  const [sending, setSending] = useState(false);
  const card = useRef<E>(null);
  useEffect(() => {
    card.current?.scrollIntoView?.({ block: "nearest" });
  }, []);
  const send = async (answer: ElicitationAnswer) => {
    setSending(true);
    setProblem(undefined);
    try {
      await api.answerElicitation(request.runId, request.id, answer);
    } catch (err) {
      setProblem(errorText(err));
      setSending(false);
    }
  };
  return { send, sending, problem, card };
}
