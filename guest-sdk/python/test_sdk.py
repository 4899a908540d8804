"""The SDK's own tests, natively (python3 -m unittest in guest-sdk/python): the dispatch from
the component's exports to a kit-style plugin, without the contract's generated types."""

import json
import unittest

from hak_guest import AbstractHook, AbstractPolicy, Block, Context, NeedsApproval, Replace, register, testing
from hak_guest import _kit

PARAMS = json.dumps(
    {
        "context": {"accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet"},
        "rawParams": {"transfers": [{"accountId": "0.0.2", "amount": 1}]},
        "normalisedParams": {"hbarTransfers": [{"accountId": "0.0.2", "amount": "100000000"}]},
    }
)


class Gate(AbstractPolicy):
    def __init__(self, config):
        if "bad" in config:
            raise ValueError("invalid config: bad")
        self.answer = config.get("answer", True)

    @property
    def name(self):
        return "Gate"

    @property
    def description(self):
        return "Gates things"

    @property
    def relevant_tools(self):
        return ["transfer_hbar_tool"]

    async def should_block_post_params_normalization(self, context, params, method):
        assert context.account_id == "0.0.1001" and context.mode == "returnBytes"
        assert params.normalized_params["hbarTransfers"][0]["accountId"] == "0.0.2"
        assert params.raw_params["transfers"][0]["amount"] == 1
        return {"block": True, "allow": False, "reason": Block("r", "C", {"n": 1}),
                "ask": NeedsApproval("ask"), "odd": 3}[self.answer] if isinstance(self.answer, str) else self.answer


class Counter(AbstractPolicy):
    """Reads only the normalised params, like max-recipients."""

    def __init__(self, config):
        self.seen = []

    @property
    def name(self):
        return "Counter"

    @property
    def relevant_tools(self):
        return ["*"]

    async def should_block_post_params_normalization(self, context, params, method):
        self.seen.append((context, params))
        return len(params.normalized_params["hbarTransfers"]) > 1


class Pending:
    def __await__(self):
        yield


class Watch(AbstractHook):
    def __init__(self, config):
        self.seen = []

    @property
    def name(self):
        return "Watch"

    @property
    def relevant_tools(self):
        return ["*"]

    async def pre_tool_execution_hook(self, context, params, method):
        self.seen.append(method)
        return Replace({"transfers": []})

    async def post_secondary_action_hook(self, context, params, method):
        await Pending()  # never completes in one step


class SdkTest(unittest.TestCase):
    def setUp(self):
        testing.reset()

    def test_a_policy_is_called_where_it_overrides_and_true_blocks_with_the_kits_words(self):
        register(Gate)
        info = _kit.describe("{}")
        self.assertEqual(info["policy_stages"], ["post_params_normalization"])
        self.assertEqual(info["hook_stages"], [])
        block = _kit.run_policy("post_params_normalization", "transfer_hbar_tool", PARAMS, None)
        self.assertEqual(block, Block("Action blocked by policy: Gate (Gates things)"))
        self.assertIsNone(_kit.run_policy("post_params_normalization", "other_tool", PARAMS, None))

    def test_false_block_approval_and_bad_answers(self):
        register(Gate)
        for answer, expected in [("allow", None), ("reason", Block("r", "C", {"n": 1})), ("ask", NeedsApproval("ask"))]:
            _kit.describe(json.dumps({"answer": answer}))
            got = _kit.run_policy("post_params_normalization", "transfer_hbar_tool", PARAMS, None)
            self.assertEqual(got, expected)
        _kit.describe(json.dumps({"answer": "odd"}))
        with self.assertRaises(TypeError):
            _kit.run_policy("post_params_normalization", "transfer_hbar_tool", PARAMS, None)

    def test_a_bad_config_refuses_the_plugin_with_its_message(self):
        register(Gate)
        with self.assertRaisesRegex(ValueError, "invalid config: bad"):
            _kit.describe('{"bad": 1}')

    def test_hooks_replace_and_an_unfinished_await_fails(self):
        register(Watch)
        info = _kit.describe("{}")
        self.assertEqual(info["hook_stages"], ["pre_tool_execution", "post_secondary_action"])
        self.assertEqual(_kit.run_hook("pre_tool_execution", "any_tool", PARAMS, None), '{"transfers":[]}')
        with self.assertRaisesRegex(RuntimeError, "no event loop"):
            _kit.run_hook("post_secondary_action", "any_tool", PARAMS, None)

    def test_a_policy_decodes_only_what_it_reads_and_the_context_on_first_use(self):
        register(Counter)
        _kit.describe("{}")
        stage = json.dumps(
            {
                "normalisedParams": {"hbarTransfers": [{"accountId": "0.0.2", "amount": "100000000"}]},
                "rawParams": {"transfers": [{"accountId": "0.0.2", "amount": 1}]},
                "context": {"accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet"},
            },
            separators=(",", ":"),
        )
        self.assertIsNone(_kit.run_policy("post_params_normalization", "any_tool", stage, None))
        context, params = _kit.plugin().seen[-1]
        # The host writes the newest part first: nothing after normalisedParams was decoded.
        self.assertEqual(list(params._values), ["normalisedParams"])
        self.assertEqual((context.account_id, context.mode, context.network), ("0.0.1001", "returnBytes", "testnet"))
        self.assertEqual(context, Context("0.0.1001", "returnBytes", "testnet"))
        self.assertEqual(params.raw_params["transfers"][0]["amount"], 1)
        self.assertEqual(Context(), Context(None, "autonomous", None))


if __name__ == "__main__":
    unittest.main()
