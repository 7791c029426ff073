import { afterAll, beforeAll, describe, it } from 'vitest';
import { memoryStorage } from '../../src/index.js';
import { describeStorageConformance } from '../../src/testing/index.js';

describeStorageConformance(
  { describe, it, beforeAll, afterAll },
  { name: 'memory', createStorage: memoryStorage },
);
