declare module '*.vue' {
  import type { DefineComponent } from 'vue';
  const component: DefineComponent<object, object, unknown>;
  export default component;
}

/** Vite's `?worker` imports: a constructor of the bundled worker. */
declare module '*?worker' {
  const WorkerConstructor: { new (): Worker };
  export default WorkerConstructor;
}

/** Global style sheets imported for their side effect (bundled by Vite). */
declare module '*.css';
