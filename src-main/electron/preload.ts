/**
 * Sandboxed preload: exposes exactly the contract's methods to the renderer (issue 5 fills the list).
 */
import { contextBridge, ipcRenderer } from 'electron';

contextBridge.exposeInMainWorld('klx', {
  call: (method: string, request: unknown): Promise<unknown> => ipcRenderer.invoke('klx:call', method, request),
});
