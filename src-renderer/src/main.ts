/**
 * Renderer entry: Vue 3 + Pinia, global styles (light and dark themes), the app shell.
 * Monaco is loaded lazily by the inspector the first time it shows a value.
 */
import { createApp } from 'vue';
import { createPinia } from 'pinia';
import './styles/app.css';
import App from './App.vue';

createApp(App).use(createPinia()).mount('#app');
