/**
 * What happens to a message sent while an agent of the chat is answering: `steer` reaches the running
 * answer before its next model call; `followup` is answered after it; `collect` gathers the messages
 * of a burst (and those sent while the agent works) into one answer; `interrupt` stops the answer and
 * answers everything.
 */
export type QueueMode = "steer" | "followup" | "collect" | "interrupt";
