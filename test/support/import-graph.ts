/**
 * The import graph of the repository's own source files, and the cycles in it.
 *
 * Reads `.ts` and `.vue` files under the given folders and follows every relative specifier of
 * `import ... from`, `export ... from`, `import '...'` and `import('...')`, type-only imports
 * included (a type-only cycle still ties two modules together for a reader). Bare specifiers
 * (packages, `node:` built-ins) are not followed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Module file (absolute path) to the module files it imports (absolute paths). */
export type ImportGraph = Map<string, string[]>;

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm;

/** The relative specifiers a source text imports, in order of appearance. */
export function relativeSpecifiers(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[2]!);
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (/\.(ts|vue)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Builds the graph of every `.ts`/`.vue` file under `dirs` (absolute folder paths). */
export function importGraph(dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of dirs.flatMap((d) => sourceFiles(d))) {
    const targets = relativeSpecifiers(readFileSync(file, 'utf8')).map((s) => resolve(dirname(file), s));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * The cycles of a graph: one entry per strongly connected component with more than one module
 * (or a module importing itself), each as a closed path `a -> b -> ... -> a` found inside the
 * component, with paths relative to `root`, sorted. Empty when the graph is acyclic. Tarjan's algorithm.
 */
export function importCycles(graph: ImportGraph, root: string): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(comp);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((comp) => {
    const inComp = new Set(comp);
    const start = [...comp].sort()[0]!;
    // Shortest way back to `start` inside the component (breadth first), to name one concrete cycle.
    const prev = new Map<string, string>();
    const queue = [start];
    let end: string | null = null;
    while (queue.length > 0 && end === null) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!inComp.has(w)) continue;
        if (w === start) { end = v; break; }
        if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
      }
    }
    const path = [start];
    for (let v = end!; v !== start; v = prev.get(v)!) path.splice(1, 0, v);
    path.push(start);
    const more = comp.length > path.length - 1 ? ` (component of ${comp.length} modules)` : '';
    return path.map((p) => relative(root, p)).join(' -> ') + more;
  }).sort();
}
