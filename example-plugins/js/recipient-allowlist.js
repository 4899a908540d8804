// "Recipient Allowlist Policy" in JavaScript: the twin of example-plugins/rust/recipient-allowlist.
import { definePlugin, Stage, allow, block, facts } from '@hak/guest';

export default definePlugin({
  describe(config) {
    for (const key of Object.keys(config)) {
      if (!['accounts', 'allowNewAccounts'].includes(key)) throw `invalid config: unknown field \`${key}\``;
    }
    if (!Array.isArray(config.accounts)) throw 'invalid config: missing field `accounts`';
    config.accounts.forEach((id, i) => {
      if (!facts.isEntityId(id)) throw `invalid config: accounts.${i}: ${JSON.stringify(id)} is not an account id (0.0.x)`;
    });
    return {
      name: 'Recipient Allowlist Policy',
      description: 'Value and allowances may only go to allowlisted accounts',
      relevantTools: facts.VALUE_TOOLS,
      policyStages: [Stage.POST_PARAMS_NORMALIZATION],
      state: { accounts: new Set(config.accounts), allowNew: config.allowNewAccounts ?? true },
    };
  },
  policy: {
    postParamsNormalization(input, { accounts, allowNew }) {
      const movements = input.movements;
      // An indexed loop: for...of runs the engine's iterator JavaScript per item.
      for (let i = 0; i < movements.length; i++) {
        const m = movements[i];
        const ok = m.to === undefined ? allowNew : accounts.has(m.to);
        if (!ok) {
          return block(`${m.to ?? 'a new account'} is not an allowlisted recipient`, {
            code: 'RECIPIENT_NOT_ALLOWED',
            details: { recipient: m.to ?? null },
          });
        }
      }
      return allow;
    },
  },
});
