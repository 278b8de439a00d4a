/** A one-line spinner on a terminal while waiting for the first token; silent when not a TTY. */
const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  start(label: string): void;
  stop(): void;
}

export function createSpinner(stream: NodeJS.WriteStream): Spinner {
  let timer: NodeJS.Timeout | undefined;
  return {
    start(label) {
      if (!stream.isTTY || timer) return;
      let i = 0;
      timer = setInterval(() => {
        stream.write(`\r${frames[i++ % frames.length]} ${label}`);
      }, 80);
      timer.unref();
    },
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      stream.write("\r\x1b[2K");
    },
  };
}
