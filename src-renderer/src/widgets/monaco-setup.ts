/**
 * Monaco, loaded on demand by the inspector (a separate chunk: the first screen does not wait for
 * it). Only the editor core, a few read-only conveniences (find, folding, bracket matching,
 * clipboard) and the JSON language are bundled; workers are built by Vite from the package (never
 * a CDN) and served by the app itself, as the CSP's `worker-src 'self' blob:` allows.
 *
 * For the SQL view: the basic `sql` language (tokens, brackets, comments; its tokenizer is loaded
 * lazily by the contribution), the suggest widget (completion of tables and columns, registered by
 * `SqlEditor.vue`) and hovers (the message of an error marker under the mouse).
 */
import * as monaco from 'monaco-editor/editor/editor.api';
import 'monaco-editor/features/find/register';
import 'monaco-editor/features/folding/register';
import 'monaco-editor/features/bracketMatching/register';
import 'monaco-editor/features/clipboard/register';
import 'monaco-editor/languages/features/json/register';
import 'monaco-editor/languages/definitions/sql/register';
import 'monaco-editor/editor/contrib/suggest/browser/suggestController';
import 'monaco-editor/features/hover/register';
// The JSON language's worker client (loaded lazily by the first JSON model) imports every editor
// contribution, and some of them register services (ICodeLensCache, ...). Services registered after
// the first editor started are unknown to it: every editor then threw "CodeLensContribution depends
// on UNKNOWN service ICodeLensCache" as a page error. Loading the same module here, before any editor
// exists, registers those services first.
import 'monaco-editor/internal/common/workers';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import JsonWorker from 'monaco-editor/languages/features/json/json.worker?worker';

self.MonacoEnvironment = {
  getWorker(_workerId: string, label: string): Worker {
    return label === 'json' ? new JsonWorker() : new EditorWorker();
  },
};

export { monaco };
