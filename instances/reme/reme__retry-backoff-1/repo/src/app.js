import express from 'express';
import { logger } from './log.js';

// Exponential backoff with full jitter. Base 250ms, capped at 30s.
export function retryDelay(attempt) {
  const base = 250;
  const cap = 30000;
  const exp = Math.min(cap, base * 2 ** attempt);
  return Math.floor(Math.random() * exp);
}

export function createApp() {
  const app = express();
  app.get('/healthz', (_req, res) => res.send('ok'));
  return app;
}
