/**
 * The inbound pipeline's hook for voice messages the platform gave no text of (`message.voice`): with
 * a speech-to-text endpoint configured the audio is downloaded and transcribed, and the transcript
 * becomes the message's text as `🎤 …` (as the platforms' own recognition is shown); without one the
 * voice is said unread, as before. A failure leaves the message out with a line for the chat.
 */
import type { SpeechToTextConfig } from "../config/speech-to-text.js";
import { FileTooLargeError } from "./file-download.js";
import { MAX_AUDIO_BYTES, transcribeAudio } from "./speech-to-text.js";
import type { InboundMessage } from "./types.js";

/** The message to take (its voice turned into text or into an `unsupported` line), and what to tell the chat. */
export interface HeardMessage {
  message: InboundMessage;
  notice?: string;
}

const DOWNLOAD_TIMEOUT_MS = 120_000;

/** Transcribes the message's voice, when it has one. Never throws. */
export async function hearVoice(
  message: InboundMessage,
  speechToText: SpeechToTextConfig | undefined,
): Promise<HeardMessage> {
  const { voice, ...rest } = message;
  if (!voice) return { message };
  if (!speechToText) {
    return { message: { ...rest, unsupported: [...(rest.unsupported ?? []), "a voice message"] } };
  }
  let transcript: string;
  try {
    const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
    const data = await voice.download(MAX_AUDIO_BYTES, signal);
    transcript = await transcribeAudio(speechToText, { name: voice.name, data }, signal);
  } catch (err) {
    const why =
      err instanceof FileTooLargeError
        ? `it is larger than the ${MAX_AUDIO_BYTES / 1024 / 1024} MB a transcription takes`
        : err instanceof Error
          ? err.message
          : String(err);
    return {
      message: rest,
      notice: `⚠️ Dimsum could not transcribe the voice message: ${why}. Send it again later, or as text.`,
    };
  }
  if (transcript === "") {
    return {
      message: rest,
      notice: "⚠️ Dimsum heard no words in the voice message; send it again or as text.",
    };
  }
  const said = `🎤 ${transcript}`;
  return { message: { ...rest, text: rest.text.trim() ? `${rest.text.trim()}\n${said}` : said } };
}
