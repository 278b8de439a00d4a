/** The meetings API for the web app: typed calls over the shared ApiClient. */
import type { ApiClient } from "../api.js";
import type { MeetingAction, MeetingInput, MeetingRecord, PostResult } from "../types.js";

const enc = encodeURIComponent;

/** Typed calls of the meeting routes. */
export function meetingApi(api: ApiClient) {
  return {
    start: (channelId: string, input: MeetingInput) =>
      api.request<MeetingRecord>("POST", `/api/channels/${enc(channelId)}/meetings`, input),
    list: (channelId: string, query = "") =>
      api.request<MeetingRecord[]>(
        "GET",
        `/api/channels/${enc(channelId)}/meetings${query.trim() ? `?q=${enc(query.trim())}` : ""}`,
      ),
    act: (meetingId: string, action: MeetingAction["action"]) =>
      api.request<MeetingRecord>("POST", `/api/meetings/${enc(meetingId)}/actions`, { action }),
    startItem: (meetingId: string, index: number) =>
      api.request<PostResult>("POST", `/api/meetings/${enc(meetingId)}/action-items/${index}/start`),
  };
}

/** Where the minutes download as Markdown. */
export function minutesMarkdownUrl(meetingId: string): string {
  return `/api/meetings/${enc(meetingId)}/minutes.md`;
}
