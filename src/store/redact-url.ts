/** A service URL (database, Redis) safe for logs and error messages: its password replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unreadable URL)";
  }
}
