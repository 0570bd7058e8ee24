// Differential driver for opossum (tests/policies/differential.rs): reads a JSON array of cases
// {options, steps} on stdin and prints, per case, one JSON line: the breaker's answer and
// state after each step. Time is fake (@sinonjs/fake-timers), starting at 0 for each case.
// Steps: {op: "advance", ms}, {op: "fire", id}, {op: "succeed", id}, {op: "fail", id}.
'use strict';

const FakeTimers = require('@sinonjs/fake-timers');

async function runCase ({ options, steps }) {
  const clock = FakeTimers.install({
    now: 0,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date']
  });
  // Loaded after the clock so that every timer opossum starts is fake.
  const CircuitBreaker = require('opossum');
  const pending = new Map();
  const action = id => new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  const breaker = new CircuitBreaker(action, options);
  let refused = null;
  breaker.on('reject', () => { refused = 'open'; });
  breaker.on('semaphoreLocked', () => { refused = 'locked'; });
  const state = () => (breaker.opened ? 'open' : breaker.halfOpen ? 'half-open' : 'closed');
  const out = [];
  for (const step of steps) {
    let answer = null;
    if (step.op === 'advance') {
      await clock.tickAsync(step.ms);
    } else if (step.op === 'fire') {
      refused = null;
      breaker.fire(step.id).catch(() => {});
      answer = refused ?? (pending.has(step.id) ? 'admitted' : 'none');
    } else {
      const call = pending.get(step.id);
      pending.delete(step.id);
      if (call && step.op === 'succeed') call.resolve('ok');
      if (call && step.op === 'fail') call.reject(new Error('dependency error'));
    }
    await clock.tickAsync(0); // settle the promise callbacks, no time passes
    out.push({ answer, state: state() });
  }
  breaker.shutdown();
  clock.uninstall();
  return out;
}

async function main () {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  for (const c of cases) {
    process.stdout.write(JSON.stringify(await runCase(c)) + '\n');
  }
}

main().catch(e => { console.error(e); process.exit(1); });
