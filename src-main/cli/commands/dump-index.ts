/** Placeholder replaced when the files layer lands. */
export function indexFileJson(file: string, label: string): Record<string, unknown>[] {
  void file;
  void label;
  return [];
}
