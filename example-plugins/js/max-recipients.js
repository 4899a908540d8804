// "Max Recipients Policy", the kit's MaxRecipientsPolicy in JavaScript: the twin of
// example-plugins/rust/max-recipients (same config, verdicts and messages).
import { definePlugin, Stage, allow, block, host } from '@hak/guest';

const DEFAULT_TOOLS = [
  'transfer_hbar_tool', 'transfer_hbar_with_allowance_tool', 'airdrop_fungible_token_tool',
  'transfer_fungible_token_tool', 'transfer_fungible_token_with_allowance_tool',
  'transfer_non_fungible_token_with_allowance_tool', 'transfer_non_fungible_token_tool',
];
const FIELD = {
  transfer_hbar_tool: 'hbarTransfers',
  transfer_hbar_with_allowance_tool: 'hbarTransfers',
  airdrop_fungible_token_tool: 'tokenTransfers',
  transfer_fungible_token_tool: 'tokenTransfers',
  transfer_fungible_token_with_allowance_tool: 'tokenTransfers',
  transfer_non_fungible_token_tool: 'transfers',
  transfer_non_fungible_token_with_allowance_tool: 'transfers',
};

// A decimal integer above zero, and any decimal integer (an optional sign, digits).
const POSITIVE = /^\+?0*[1-9][0-9]*$/;
const INTEGER = /^[+-]?[0-9]+$/;

/**
 * Whether an amount is above zero: the Rust SDK's `Amount` (a decimal string or a number;
 * anything else is unreadable). Decided by the text's shape, without making a BigInt: this
 * runs once per entry on every call.
 */
function isPositive(v, method) {
  if (typeof v === 'string') {
    if (POSITIVE.test(v)) return true;
    if (INTEGER.test(v)) return false;
  } else if (typeof v === 'number') {
    return v > 0;
  }
  throw `cannot read stage params for ${method}: bad amount ${JSON.stringify(v)}`;
}
/** The kit's `_isRecipient`: no amount (an NFT) counts; otherwise it must be above zero. */
function isRecipient(e, method) {
  const amount = e?.amount;
  if (amount === undefined || amount === null) return true;
  if (typeof amount === 'string') {
    // The host's own spelling, an integer's shortest decimal text, read as a number without a
    // regular expression (the common case; anything else is read by its shape below).
    const n = +amount;
    if (n % 1 === 0 && n < 1e21 && n > -1e21 && '' + n === amount) return n > 0;
  }
  return isPositive(amount, method);
}

// Counted from the host's facts when listed in additionalTools (not among the kit's defaults).
const FACT_COUNTED = new Set(['transfer_erc20_tool', 'transfer_erc721_tool', 'mint_erc721_tool']);

function countWithRule(rule, normalised, method) {
  if (rule.count !== undefined) return rule.count;
  let at = normalised;
  for (const key of rule.field.split('.')) at = at?.[key];
  if (!Array.isArray(at)) return 0;
  if (rule.amountField === undefined) return at.length;
  return at.filter((item) => {
    const v = item?.[rule.amountField];
    if (v === undefined || v === null) return true;
    try {
      return isPositive(v, method);
    } catch {
      return false;
    }
  }).length;
}

export default definePlugin({
  describe(config) {
    for (const key of Object.keys(config)) {
      if (!['maxRecipients', 'additionalTools', 'customCounts'].includes(key)) {
        throw `MaxRecipientsPolicy: invalid config: unknown field \`${key}\``;
      }
    }
    const max = config.maxRecipients;
    if (!Number.isInteger(max) || max <= 0) {
      throw `MaxRecipientsPolicy: 'maxRecipients' must be a positive integer. Received: ${JSON.stringify(max)}`;
    }
    const custom = config.customCounts ?? {};
    for (const [tool, rule] of Object.entries(custom)) {
      if ((rule.field === undefined) === (rule.count === undefined)) {
        throw `MaxRecipientsPolicy: customCounts.${tool} needs exactly one of 'field' or 'count'`;
      }
    }
    return {
      name: 'Max Recipients Policy',
      description: `Limits the maximum number of recipients to ${max}`,
      relevantTools: [...DEFAULT_TOOLS, ...(config.additionalTools ?? [])],
      policyStages: [Stage.POST_PARAMS_NORMALIZATION],
      state: { max, custom },
      // Each tool gets only what its rule reads: normalisedParams, the facts' movements
      // (EVM tools), or nothing (a fixed count).
      reads: {
        ...Object.fromEntries(Object.entries(custom).map(([tool, rule]) => [tool, rule.count === undefined ? ['params'] : []])),
        ...Object.fromEntries([...FACT_COUNTED].filter((tool) => !custom[tool]).map((tool) => [tool, ['facts']])),
        '*': ['params'],
      },
    };
  },
  policy: {
    postParamsNormalization(input, { max, custom }) {
      const method = input.method;
      let count = 0;
      if (custom[method]) {
        count = countWithRule(custom[method], input.normalisedParams, method);
      } else if (FACT_COUNTED.has(method)) {
        count = input.movements.length;
      } else {
        const field = FIELD[method];
        if (!field) {
          throw `MaxRecipientsPolicy: Unhandled tool '${method}'. Provide a custom strategy in the constructor.`;
        }
        const entries = input.normalisedParams?.[field];
        if (Array.isArray(entries)) {
          for (let i = 0; i < entries.length; i++) if (isRecipient(entries[i], method)) count++;
        }
      }
      if (count <= max) return allow;
      host.warn(`MaxRecipientsPolicy: ${method} tool call rejected, expected max ${max} recipients, got ${count}`);
      return block(`${count} recipients exceed the maximum of ${max}`, {
        code: 'MAX_RECIPIENTS_EXCEEDED',
        details: { recipientCount: count, maxRecipients: max },
      });
    },
  },
});
