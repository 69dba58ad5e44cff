#!/usr/bin/env node
import { runCli } from './main.js';
import { processIo } from './io.js';

runCli(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 1;
  },
);
