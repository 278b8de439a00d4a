/**
 * Whether a key press belongs to an input method's composition (Chinese pinyin, Japanese kana): the
 * Enter that picks a candidate must never send the message. `isComposing` covers most browsers;
 * Safari fires the candidate's Enter after `compositionend`, with keyCode 229 as its only mark.
 */
export function isImeKey(event: KeyboardEvent): boolean {
  return event.isComposing || event.keyCode === 229;
}
