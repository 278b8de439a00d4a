/**
 * Files dragged anywhere over the page while a chat is open: whether some are over it now (the
 * composer shows its drop target) and the files when they are dropped. A drop is always taken, so
 * a missed target never makes the browser leave the app to open the file.
 */
import { useEffect, useRef, useState } from "preact/hooks";

function carriesFiles(e: DragEvent): boolean {
  return e.dataTransfer?.types.includes("Files") === true;
}

/** Listens on the document while mounted (and `enabled`); returns whether files are being dragged. */
export function useFileDrop(enabled: boolean, onFiles: (files: File[]) => void): boolean {
  const [dragging, setDragging] = useState(false);
  const handler = useRef(onFiles);
  handler.current = onFiles;

  useEffect(() => {
    if (!enabled) return;
    // dragenter/dragleave fire for every element crossed; the count says when the drag left the page.
    let depth = 0;
    const enter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth += 1;
      setDragging(true);
    };
    const over = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
    };
    const leave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const drop = (e: DragEvent) => {
      const files = [...(e.dataTransfer?.files ?? [])];
      depth = 0;
      setDragging(false);
      if (files.length === 0) return;
      e.preventDefault();
      handler.current(files);
    };
    const end = () => {
      depth = 0;
      setDragging(false);
    };
    document.addEventListener("dragenter", enter);
    document.addEventListener("dragover", over);
    document.addEventListener("dragleave", leave);
    document.addEventListener("drop", drop);
    document.addEventListener("dragend", end);
    return () => {
      document.removeEventListener("dragenter", enter);
      document.removeEventListener("dragover", over);
      document.removeEventListener("dragleave", leave);
      document.removeEventListener("drop", drop);
      document.removeEventListener("dragend", end);
      setDragging(false);
    };
  }, [enabled]);

  return dragging;
}
