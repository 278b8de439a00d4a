/** Light/dark theme: follows prefers-color-scheme unless the user picked one (stored, not secret). */

export type ThemeChoice = "system" | "light" | "dark";

const STORAGE_KEY = "dimsum.theme";

/** The next choice of the theme toggle: system → light → dark → system. */
export function nextTheme(choice: ThemeChoice): ThemeChoice {
  return choice === "system" ? "light" : choice === "light" ? "dark" : "system";
}

/** The stored choice, or "system". */
export function loadTheme(): ThemeChoice {
  try {
    const stored = localStorage.getItem(STORAGE_KEY);
    return stored === "light" || stored === "dark" ? stored : "system";
  } catch {
    return "system";
  }
}

/** Applies a choice to <html data-theme> (CSS keys off it) and remembers it. */
export function applyTheme(choice: ThemeChoice): void {
  const root = document.documentElement;
  if (choice === "system") delete root.dataset.theme;
  else root.dataset.theme = choice;
  try {
    if (choice === "system") localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, choice);
  } catch {
    // Storage can be disabled (private mode); the theme still applies for this page.
  }
}
