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

/** The Rust SDK's `Amount`: a decimal string or a number; anything else is unreadable. */
function readAmount(v, method) {
  if (typeof v === 'string' && /^[+-]?\d+$/.test(v)) return BigInt(v);
  if (typeof v === 'number') return v > 0 ? 1n : v < 0 ? -1n : 0n;
  throw `cannot read stage params for ${method}: bad amount ${JSON.stringify(v)}`;
}
/** The kit's `_isRecipient`: no amount (an NFT) counts; otherwise it must be above zero. */
const isRecipient = (e, method) => e?.amount === undefined || e.amount === null || readAmount(e.amount, method) > 0n;

// Counted from the host's facts when listed in additionalTools (not among the kit's defaults).
const FACT_COUNTED = ['transfer_erc20_tool', 'transfer_erc721_tool', 'mint_erc721_tool'];

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
      return readAmount(v, method) > 0n;
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
        ...Object.fromEntries(FACT_COUNTED.filter((tool) => !custom[tool]).map((tool) => [tool, ['facts']])),
        '*': ['params'],
      },
    };
  },
  policy: {
    postParamsNormalization(input, { max, custom }) {
      let count;
      if (custom[input.method]) {
        count = countWithRule(custom[input.method], input.normalisedParams, input.method);
      } else if (FACT_COUNTED.includes(input.method)) {
        count = input.movements.length;
      } else {
        const field = FIELD[input.method];
        if (!field) {
          throw `MaxRecipientsPolicy: Unhandled tool '${input.method}'. Provide a custom strategy in the constructor.`;
        }
        const entries = input.normalisedParams?.[field];
        count = Array.isArray(entries) ? entries.filter((e) => isRecipient(e, input.method)).length : 0;
      }
      if (count <= max) return allow;
      host.warn(`MaxRecipientsPolicy: ${input.method} tool call rejected, expected max ${max} recipients, got ${count}`);
      return block(`${count} recipients exceed the maximum of ${max}`, {
        code: 'MAX_RECIPIENTS_EXCEEDED',
        details: { recipientCount: count, maxRecipients: max },
      });
    },
  },
});
