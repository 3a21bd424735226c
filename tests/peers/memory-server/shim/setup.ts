// Each test starts with no memory named, and closes the clients (and so
// the server processes) its managers opened.
import { afterEach, beforeEach } from 'vitest';
import { closeAllClients } from './index.js';
import { forgetMemories } from './target.js';

beforeEach(() => {
  forgetMemories();
});

afterEach(async () => {
  await closeAllClients();
});
