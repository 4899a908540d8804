// "Time Window Policy" in JavaScript: the twin of example-plugins/rust/time-window, written
// with plain `new Date()` — JS plugins read the host's clock live (and Math.random the host's
// random source), never a value frozen when the component was built.
// Config: {"weekdays": ["mon", …], "fromHour": 9, "toHour": 17, "relevantTools": ["*"]}.
import { definePlugin, Stage, allow, block } from '@hak/guest';

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export default definePlugin({
  describe(config) {
    for (const key of Object.keys(config)) {
      if (!['weekdays', 'fromHour', 'toHour', 'relevantTools'].includes(key)) throw `invalid config: unknown field \`${key}\``;
    }
    let days = 0x7f;
    if (config.weekdays !== undefined) {
      days = 0;
      config.weekdays.forEach((d, i) => {
        const at = DAYS.indexOf(String(d).slice(0, 3).toLowerCase());
        if (at < 0) throw `invalid config: weekdays.${i}: ${JSON.stringify(d)} is not a weekday (mon…sun)`;
        days |= 1 << at;
      });
      if (days === 0) throw 'invalid config: weekdays: list at least one day';
    }
    const from = config.fromHour ?? 0;
    const to = config.toHour ?? 24;
    if (!Number.isInteger(from) || from < 0 || from > 23) throw `invalid config: fromHour: ${from} is not an hour (0–23)`;
    if (!Number.isInteger(to) || to < 0 || to > 24 || to === from) throw `invalid config: toHour: ${to} must be 0–24 and differ from fromHour`;
    const pad = (h) => String(h).padStart(2, '0');
    return {
      name: 'Time Window Policy',
      description: `Tools run only ${pad(from)}:00–${pad(to)}:00 UTC on allowed days`,
      relevantTools: config.relevantTools ?? ['*'],
      policyStages: [Stage.PRE_TOOL_EXECUTION],
      state: { days, from, to },
    };
  },
  policy: {
    preToolExecution(input, { days, from, to }) {
      const now = new Date();
      const hour = now.getUTCHours();
      const inHours = from <= to ? hour >= from && hour < to : hour >= from || hour < to;
      if ((days & (1 << now.getUTCDay())) !== 0 && inHours) return allow;
      return block(`${input.method} is outside the allowed time window`, {
        code: 'OUTSIDE_TIME_WINDOW',
        details: { nowUnixMs: Date.now(), nonce: Math.random() },
      });
    },
  },
});
